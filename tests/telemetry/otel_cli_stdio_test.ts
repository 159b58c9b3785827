/**
 * Issue 19's telemetry over stdio: `cli serve examples/everything.ts` with
 * Deno's built-in OpenTelemetry on, exporting OTLP/HTTP JSON to a receiver
 * on loopback, driven over the pipe with raw JSON-RPC (a 2025-11-25 session,
 * then a 2026-07-28 stateless call) carrying a `traceparent` in `_meta`. The
 * official SDK clients drive the same checks over HTTP (otel_cli_http_test).
 *
 * The children are owned here, not by an SDK transport: a `cli serve` with
 * Deno's OpenTelemetry on sometimes hangs on its way out on a busy machine
 * (its main thread blocked in Deno's exit, SIGTERM no longer heard), and the
 * SDK's close then held the whole test run; a child that has not ended 8 s
 * after its stdin closed is killed.
 */

import assert from "node:assert/strict";
import { otelEnv, type OtlpReceiver, startOtlpReceiver } from "./otlp_receiver.ts";

const ROOT = new URL("../..", import.meta.url);
const TRACE = { legacy: "c".repeat(32), modern: "d".repeat(32) };
const SPAN = "e".repeat(16);
const traceparent = (traceId: string) => `00-${traceId}-${SPAN}-01`;

/** A `cli serve` child on stdio: send lines, await answers by id, end it. */
function serveChild(receiver: OtlpReceiver) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "cli/main.ts", "serve", "examples/everything.ts"],
    cwd: ROOT,
    env: otelEnv(receiver),
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  const answers = new Map<unknown, Record<string, unknown>>();
  const reading = (async () => {
    let buffer = "";
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      buffer += chunk;
      for (let nl = buffer.indexOf("\n"); nl !== -1; nl = buffer.indexOf("\n")) {
        const message = JSON.parse(buffer.slice(0, nl));
        buffer = buffer.slice(nl + 1);
        if ("id" in message) answers.set(message.id, message);
      }
    }
  })();
  return {
    async send(message: Record<string, unknown>): Promise<void> {
      await writer.write(new TextEncoder().encode(JSON.stringify(message) + "\n"));
    },
    async answer(id: number): Promise<Record<string, unknown>> {
      const deadline = Date.now() + 30_000;
      while (!answers.has(id)) {
        if (Date.now() > deadline) throw new Error(`no answer to ${id}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return answers.get(id)!;
    },
    /** Ends stdin; whether the child then ended by itself (else it was killed). */
    async close(): Promise<boolean> {
      await writer.close().catch(() => {});
      let timer: ReturnType<typeof setTimeout> | undefined;
      const ended = await Promise.race([
        child.status.then(() => true),
        new Promise<false>((resolve) => timer = setTimeout(() => resolve(false), 8_000)),
      ]);
      clearTimeout(timer);
      if (!ended) child.kill("SIGKILL");
      await child.status;
      await reading.catch(() => {});
      return ended;
    },
  };
}

Deno.test("telemetry over stdio: spans and metrics per the MCP conventions, both eras", async () => {
  const receiver = startOtlpReceiver();
  const find = (traceId: string) =>
    receiver.spans.find((s) => s.traceId === traceId && s.scope === "@anubis/core");
  const has = (metric: string, match: Record<string, unknown>) =>
    receiver.points.some((p) =>
      p.metric === metric && Object.entries(match).every(([k, v]) => p.attributes[k] === v)
    );
  try {
    // Each span and operation duration is awaited while its server lives (exported
    // every 50 ms and 200 ms); the session's duration is recorded when the pipe ends.
    const legacyChild = serveChild(receiver);
    let legacyEnded: boolean;
    try {
      await legacyChild.send({
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "raw", version: "0" },
        },
      });
      await legacyChild.answer(0);
      await legacyChild.send({ jsonrpc: "2.0", method: "notifications/initialized" });
      await legacyChild.send({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: {
          name: "test_error_handling",
          arguments: {},
          _meta: { traceparent: traceparent(TRACE.legacy) },
        },
      });
      const result = (await legacyChild.answer(1)).result as { isError?: boolean };
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
      legacyEnded = await legacyChild.close();
    }

    const modernChild = serveChild(receiver);
    try {
      await modernChild.send({
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
      });
      assert.ok((await modernChild.answer(1)).result);
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
