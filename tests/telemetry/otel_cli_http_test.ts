/**
 * The proof of issue 19's telemetry: `cli serve examples/everything.ts
 * --http` with Deno's built-in OpenTelemetry on (`OTEL_DENO=true`),
 * exporting OTLP/HTTP JSON to a receiver on loopback, driven by the official
 * SDK clients (v1 at 2025-11-25, v2 pinned to 2026-07-28) that send a
 * `traceparent` in `_meta`. The spans and the duration metrics the receiver
 * gets are those of the MCP semantic conventions.
 */

import assert from "node:assert/strict";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StreamableHTTPClientTransport as StreamableHttpV2 } from "@modelcontextprotocol/client";
import { startHttpServer } from "../helpers/everything_http_server.ts";
import { connectV1 } from "../helpers/everything_sdk_v1.ts";
import { connectV2 } from "../helpers/everything_sdk_v2.ts";
import { DURATION_BUCKETS } from "@anubis/telemetry";
import { otelEnv, type ReceivedSpan, startOtlpReceiver } from "./otlp_receiver.ts";

/** A client's span context, as `traceparent` carries it. */
const parent = (n: number) => ({
  traceId: `${n}`.repeat(32).slice(0, 32),
  spanId: `${n}a`.repeat(8),
  get traceparent() {
    return `00-${this.traceId}-${this.spanId}-01`;
  },
});

Deno.test("telemetry over HTTP: spans and metrics per the MCP conventions, both eras", async () => {
  const receiver = startOtlpReceiver();
  const server = await startHttpServer([], otelEnv(receiver));
  const simple = parent(1), failing = parent(2), unknown = parent(3), modern = parent(4);
  const prompt = parent(5), resource = parent(6);
  const header = parent(7);
  let sessionId: string | undefined;
  try {
    // Legacy era: the v1 client, whose HTTP requests carry a traceparent header too.
    const transport = new StreamableHTTPClientTransport(server.url, {
      requestInit: { headers: { traceparent: header.traceparent } },
    });
    const { client } = await connectV1(transport, "2025-11-25");
    sessionId = transport.sessionId;
    const call = (name: string, context: { traceparent: string }) =>
      client.callTool({ name, arguments: {}, _meta: { traceparent: context.traceparent } });
    assert.equal((await call("test_simple_text", simple)).isError, undefined);
    assert.equal((await call("test_error_handling", failing)).isError, true);
    await assert.rejects(call("no_such_tool", unknown));
    await client.getPrompt({
      name: "test_simple_prompt",
      _meta: { traceparent: prompt.traceparent },
    });
    await client.readResource({
      uri: "test://static-text",
      _meta: { traceparent: resource.traceparent },
    });
    await transport.terminateSession(); // DELETE: the session ends
    await client.close();

    // 2026-07-28: the v2 client.
    const v2 = await connectV2(new StreamableHttpV2(server.url));
    try {
      const result = await v2.client.callTool({
        name: "test_simple_text",
        arguments: {},
        _meta: { traceparent: modern.traceparent },
      });
      assert.equal(result.isError, undefined);
      // No trace context in _meta: the call goes on the HTTP request's own server span.
      await v2.client.callTool({ name: "test_simple_prompt_args_tool", arguments: {} }).catch(
        () => {},
      );
    } finally {
      await v2.client.close();
    }

    const byTrace = (traceId: string) => (span: ReceivedSpan) =>
      span.traceId === traceId && span.scope === "@anubis/telemetry";
    const find = (traceId: string) => receiver.spans.find(byTrace(traceId));
    await receiver.until(
      () => [simple, failing, unknown, modern, prompt, resource].every((c) => find(c.traceId)),
      "the MCP spans",
    );

    const legacy = {
      "mcp.protocol.version": "2025-11-25",
      "mcp.session.id": sessionId,
      "network.transport": "tcp",
      "network.protocol.name": "http",
    };
    // A tool call: named after the tool, the client's span its parent, the HTTP request's linked.
    const ok = find(simple.traceId)!;
    assert.equal(ok.name, "tools/call test_simple_text");
    assert.equal(ok.kind, 2); // SERVER
    assert.equal(ok.parentSpanId, simple.spanId);
    assert.equal(typeof ok.attributes["jsonrpc.request.id"], "string");
    assert.deepEqual(
      { ...ok.attributes, "jsonrpc.request.id": undefined },
      {
        "mcp.method.name": "tools/call",
        "gen_ai.tool.name": "test_simple_text",
        "gen_ai.operation.name": "execute_tool",
        "jsonrpc.request.id": undefined,
        ...legacy,
      },
    );
    assert.ok(
      ok.links.some((link) => link.traceId === header.traceId && link.spanId === header.spanId),
      JSON.stringify(ok.links),
    );
    assert.equal(ok.status.code ?? 0, 0);

    // A tool's isError result: error.type tool_error.
    const toolError = find(failing.traceId)!;
    assert.equal(toolError.name, "tools/call test_error_handling");
    assert.equal(toolError.attributes["error.type"], "tool_error");
    assert.equal(toolError.status.code, 2); // ERROR

    // A JSON-RPC error: its code, as error.type and rpc.response.status_code.
    const rpcError = find(unknown.traceId)!;
    assert.equal(rpcError.name, "tools/call no_such_tool");
    assert.equal(rpcError.attributes["error.type"], "-32602");
    assert.equal(rpcError.attributes["rpc.response.status_code"], "-32602");
    assert.equal(rpcError.status.code, 2);

    const promptSpan = find(prompt.traceId)!;
    assert.equal(promptSpan.name, "prompts/get test_simple_prompt");
    assert.equal(promptSpan.attributes["gen_ai.prompt.name"], "test_simple_prompt");
    assert.equal(promptSpan.attributes["gen_ai.operation.name"], undefined);
    const read = find(resource.traceId)!;
    assert.equal(read.name, "resources/read"); // a URI is no low-cardinality target
    assert.equal(read.attributes["mcp.resource.uri"], "test://static-text");

    // The stateless era: no session, its own version.
    const stateless = find(modern.traceId)!;
    assert.equal(stateless.name, "tools/call test_simple_text");
    assert.equal(stateless.parentSpanId, modern.spanId);
    assert.equal(stateless.attributes["mcp.protocol.version"], "2026-07-28");
    assert.equal(stateless.attributes["mcp.session.id"], undefined);
    assert.equal(stateless.attributes["network.transport"], "tcp");

    // Without a trace context in _meta, the HTTP server span (Deno's) is the call's: named after
    // it, with its attributes and outcome; no second span.
    await receiver.until(
      () => receiver.spans.some((s) => s.name === "tools/call test_simple_prompt_args_tool"),
      "the annotated HTTP span",
    );
    const annotated = receiver.spans.filter((s) =>
      s.name === "tools/call test_simple_prompt_args_tool"
    );
    assert.equal(annotated.length, 1, JSON.stringify(annotated));
    assert.notEqual(annotated[0].scope, "@anubis/telemetry");
    assert.equal(annotated[0].attributes["mcp.method.name"], "tools/call");
    assert.equal(annotated[0].attributes["mcp.protocol.version"], "2026-07-28");
    assert.equal(annotated[0].attributes["error.type"], "-32602");
    assert.equal(annotated[0].kind, 2); // SERVER

    // Spans without a client trace context still come, e.g. initialize.
    const initialize = receiver.spans.find((s) => s.name === "initialize");
    assert.equal(initialize?.attributes["mcp.protocol.version"], "2025-11-25");

    // The metrics: operation durations by method, tool and outcome; the session's duration.
    const point = (metric: string, match: Record<string, unknown>) =>
      receiver.points.find((p) =>
        p.metric === metric && Object.entries(match).every(([k, v]) => p.attributes[k] === v)
      );
    await receiver.until(
      () =>
        !!point("mcp.server.operation.duration", { "error.type": "tool_error" }) &&
        !!point("mcp.server.operation.duration", { "mcp.protocol.version": "2026-07-28" }) &&
        !!point("mcp.server.session.duration", {}),
      "the duration metrics",
    );
    const operation = point("mcp.server.operation.duration", {
      "mcp.method.name": "tools/call",
      "gen_ai.tool.name": "test_simple_text",
      "mcp.protocol.version": "2025-11-25",
    })!;
    assert.equal(operation.unit, "s");
    assert.deepEqual(operation.explicitBounds, DURATION_BUCKETS);
    assert.equal(operation.attributes["mcp.session.id"], undefined); // not a metric attribute
    const failed = point("mcp.server.operation.duration", {
      "gen_ai.tool.name": "no_such_tool",
    })!;
    assert.equal(failed.attributes["error.type"], "-32602");
    assert.equal(failed.attributes["rpc.response.status_code"], "-32602");
    const session = point("mcp.server.session.duration", {
      "mcp.protocol.version": "2025-11-25",
    })!;
    assert.equal(session.count, 1);
    assert.equal(session.unit, "s");
    assert.equal(session.attributes["network.transport"], "tcp");
    assert.deepEqual(session.explicitBounds, DURATION_BUCKETS);
  } finally {
    await server.stop();
    await receiver.close();
  }
});
