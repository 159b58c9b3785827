/**
 * Issue 19's telemetry over stdio: `cli serve examples/everything.ts` with
 * Deno's built-in OpenTelemetry on, exporting OTLP/HTTP JSON to a receiver
 * on loopback, driven by the official SDK clients over the pipe (v1 at
 * 2025-11-25, v2 pinned to 2026-07-28) with a `traceparent` in `_meta`.
 */

import assert from "node:assert/strict";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StdioClientTransport as StdioV2 } from "@modelcontextprotocol/client/stdio";
import { serveParams } from "../helpers/stdio_child.ts";
import { connectV1 } from "../helpers/everything_sdk_v1.ts";
import { connectV2 } from "../helpers/everything_sdk_v2.ts";
import { otelEnv, startOtlpReceiver } from "./otlp_receiver.ts";

const TRACE = { legacy: "c".repeat(32), modern: "d".repeat(32) };
const SPAN = "e".repeat(16);
const traceparent = (traceId: string) => `00-${traceId}-${SPAN}-01`;

/**
 * Kills a server child that outlived its client. On a busy machine a child
 * with Deno's OpenTelemetry on was once seen to hang on its way out (SIGTERM
 * no longer heard) with an export in flight to the receiver, whose shutdown
 * then waited forever: the test, and CI, with it. Only our own `cli serve`
 * child is killed (its command line is checked, in case the pid was reused).
 */
function killLeftover(pid: number | null | undefined): void {
  if (!pid) return;
  try {
    const command = Deno.readTextFileSync(`/proc/${pid}/cmdline`);
    if (command.includes("cli/main.ts")) Deno.kill(pid, "SIGKILL");
  } catch {
    // Gone (or no /proc): nothing to do.
  }
}

Deno.test("telemetry over stdio: spans and metrics per the MCP conventions, both eras", async () => {
  const receiver = startOtlpReceiver();
  const params = () => {
    const base = serveParams("examples/everything.ts");
    return { ...base, env: { ...base.env, ...otelEnv(receiver) } };
  };
  const find = (traceId: string) =>
    receiver.spans.find((s) => s.traceId === traceId && s.scope === "@anubis/core");
  const pids: (number | null)[] = [];
  try {
    const v1Transport = new StdioClientTransport(params());
    const { client } = await connectV1(v1Transport, "2025-11-25");
    pids.push(v1Transport.pid);
    try {
      const result = await client.callTool({
        name: "test_error_handling",
        arguments: {},
        _meta: { traceparent: traceparent(TRACE.legacy) },
      });
      assert.equal(result.isError, true);
      // Exported while the process lives (a slow exit on a busy machine may be cut short).
      await receiver.until(() => !!find(TRACE.legacy), "the legacy span");
    } finally {
      await client.close(); // ends the pipe: the session ends, the process flushes and exits
    }
    const v2Transport = new StdioV2(params());
    const v2 = await connectV2(v2Transport);
    pids.push(v2Transport.pid);
    try {
      await v2.client.callTool({
        name: "test_simple_text",
        arguments: {},
        _meta: { traceparent: traceparent(TRACE.modern) },
      });
      await receiver.until(() => !!find(TRACE.modern), "the 2026-07-28 span");
    } finally {
      await v2.client.close();
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

    const has = (metric: string, match: Record<string, unknown>) =>
      receiver.points.some((p) =>
        p.metric === metric && Object.entries(match).every(([k, v]) => p.attributes[k] === v)
      );
    await receiver.until(
      () =>
        has("mcp.server.operation.duration", {
          "network.transport": "pipe",
          "error.type": "tool_error",
        }) &&
        has("mcp.server.operation.duration", { "mcp.protocol.version": "2026-07-28" }) &&
        has("mcp.server.session.duration", {
          "network.transport": "pipe",
          "mcp.protocol.version": "2025-11-25",
        }),
      "the duration metrics",
    );
  } finally {
    pids.forEach(killLeftover);
    await receiver.close();
  }
});
