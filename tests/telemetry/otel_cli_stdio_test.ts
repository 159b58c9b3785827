/**
 * Issue 19's telemetry over stdio: `cli serve examples/everything.ts` with
 * Deno's built-in OpenTelemetry on, exporting OTLP/HTTP JSON to a receiver
 * on loopback, driven over the pipe with raw JSON-RPC (a 2025-11-25 session,
 * then a 2026-07-28 stateless call) carrying a `traceparent` in `_meta`. The
 * official SDK clients drive the same checks over HTTP (otel_cli_http_test).
 *
 * The children are the stdio helper's, not an SDK transport's: with the SDK
 * stdio transports a lingering `cli serve` child once held the whole test run
 * in their close; the helper kills a child not ended 8 s after its stdin
 * closed.
 */

import assert from "node:assert/strict";
import { handshake, start } from "../helpers/stdio_child.ts";
import { otelEnv, startOtlpReceiver } from "./otlp_receiver.ts";

const TRACE = { legacy: "c".repeat(32), modern: "d".repeat(32) };
const SPAN = "e".repeat(16);
const traceparent = (traceId: string) => `00-${traceId}-${SPAN}-01`;
const line = (message: Record<string, unknown>) => JSON.stringify(message) + "\n";

Deno.test("telemetry over stdio: spans and metrics per the MCP conventions, both eras", async () => {
  const receiver = startOtlpReceiver();
  const find = (traceId: string) =>
    receiver.spans.find((s) => s.traceId === traceId && s.scope === "@anubis/telemetry");
  const has = (metric: string, match: Record<string, unknown>) =>
    receiver.points.some((p) =>
      p.metric === metric && Object.entries(match).every(([k, v]) => p.attributes[k] === v)
    );
  try {
    // Each span and operation duration is awaited while its server lives (exported
    // every 50 ms and 200 ms); the session's duration is recorded when the pipe ends.
    const legacyChild = start("examples/everything.ts", otelEnv(receiver));
    let legacyEnded: boolean;
    try {
      await handshake(legacyChild, "2025-11-25");
      await legacyChild.send(line({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: {
          name: "test_error_handling",
          arguments: {},
          _meta: { traceparent: traceparent(TRACE.legacy) },
        },
      }));
      const result = (await legacyChild.next((m) => m.id === 1)).result as { isError?: boolean };
      assert.equal(result.isError, true);
      await receiver.until(
        () =>
          !!find(TRACE.legacy) &&
          has("mcp.server.operation.duration", {
            "network.transport": "pipe",
            "error.type": "tool_error",
          }),
        "the legacy span and its duration",
      );
    } finally {
      legacyEnded = !(await legacyChild.close()).killed;
    }

    const modernChild = start("examples/everything.ts", otelEnv(receiver));
    try {
      await modernChild.send(line({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: {
          name: "test_simple_text",
          arguments: {},
          _meta: {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            traceparent: traceparent(TRACE.modern),
          },
        },
      }));
      assert.ok((await modernChild.next((m) => m.id === 1)).result);
      await receiver.until(
        () =>
          !!find(TRACE.modern) &&
          has("mcp.server.operation.duration", { "mcp.protocol.version": "2026-07-28" }),
        "the 2026-07-28 span and its duration",
      );
    } finally {
      await modernChild.close();
    }

    const legacy = find(TRACE.legacy)!;
    assert.equal(legacy.name, "tools/call test_error_handling");
    assert.equal(legacy.parentSpanId, SPAN);
    assert.equal(legacy.attributes["network.transport"], "pipe");
    assert.equal(legacy.attributes["network.protocol.name"], undefined);
    assert.equal(legacy.attributes["mcp.protocol.version"], "2025-11-25");
    assert.equal(legacy.attributes["error.type"], "tool_error");
    assert.deepEqual(legacy.links, []);
    const modern = find(TRACE.modern)!;
    assert.equal(modern.name, "tools/call test_simple_text");
    assert.equal(modern.parentSpanId, SPAN);
    assert.equal(modern.attributes["network.transport"], "pipe");
    assert.equal(modern.attributes["mcp.protocol.version"], "2026-07-28");
    assert.equal(modern.attributes["error.type"], undefined);

    // The stdio session's duration leaves with the process's last export, which a child
    // killed on its way out never makes (the HTTP test and the unit tests check it always).
    if (legacyEnded) {
      await receiver.until(
        () =>
          has("mcp.server.session.duration", {
            "network.transport": "pipe",
            "mcp.protocol.version": "2025-11-25",
          }),
        "the stdio session's duration",
      );
    } else {
      console.error("otel_cli_stdio_test: the 2025-11-25 child hung on exit and was killed");
    }
  } finally {
    await receiver.close();
  }
});
