/**
 * The engine alone, in process: `engine.handle` of a decoded `tools/call`
 * (stateless 2026-07-28, and in one initialized 2025-11-25 session), JSON
 * parse of the line included, as a stdio transport serves it. Prints the
 * median CPU time per call over batches (the process's user + system time,
 * which moves less than wall time on a busy machine) and the bytes allocated
 * per call:
 * `deno run -A --v8-flags=--min-semi-space-size=256,--max-semi-space-size=256,--expose-gc
 * bench/engine_alone.ts [CALLS] [--telemetry]`. With `--telemetry` the server
 * has the `@anubis/telemetry` middleware: run it with `OTEL_DENO=true`
 * (and an `OTEL_EXPORTER_OTLP_ENDPOINT` to export to) to measure what the
 * middleware costs on Deno's OpenTelemetry, apart from Deno's HTTP spans.
 *
 * @module
 */

import { defineServer } from "@anubis/core";
import { Engine, type Exchange, type JsonRpcMessage } from "@anubis/core/engine";
import { telemetry } from "@anubis/telemetry";
import { createDefaultRegistry } from "@anubis/dialects";
import { Sampler } from "./measurement.ts";
import server from "./servers/echo_server.ts";
import { legacyCall, legacyInitialize, statelessCall } from "./wire.ts";

/** Median µs per call over batches, and KB allocated per call (median of 5). */
async function measure(
  engine: Engine,
  line: string,
  exchange: Exchange,
  calls: number,
): Promise<{ us: number; kb: number }> {
  const once = () => engine.handle(JSON.parse(line) as JsonRpcMessage, exchange);
  for (let i = 0; i < 5_000; i++) await once();
  const sampler = new Sampler();
  for (let batch = 0; batch < 15; batch++) {
    sampler.start();
    for (let i = 0; i < calls; i++) await once();
    sampler.end(calls);
  }
  return sampler.medians();
}

if (import.meta.main) {
  const calls = Number(Deno.args.find((arg) => !arg.startsWith("--")) ?? 5_000);
  const traced = Deno.args.includes("--telemetry")
    ? defineServer({ ...server.definition, middleware: [telemetry()] })
    : server;
  const engine = new Engine(traced, { registry: createDefaultRegistry() });
  const emit = () => Promise.resolve();
  const stateless: Exchange = { transport: "stdio", emit };
  const session = engine.createSession({ transport: "stdio", onMessage: emit });
  const legacy: Exchange = { session, transport: "stdio", emit };
  await engine.handle(JSON.parse(legacyInitialize().body), legacy);
  await engine.handle({ jsonrpc: "2.0", method: "notifications/initialized" }, legacy);
  const rows: [string, string, Exchange][] = [
    ["stateless tools/call", statelessCall(1).body, stateless],
    ["session tools/call", legacyCall(undefined, undefined, 1).body, legacy],
  ];
  for (let round = 0; round < 2; round++) {
    for (const [name, line, exchange] of rows) {
      const { us, kb } = await measure(engine, line, exchange, calls);
      console.log(`${name.padEnd(24)} ${us.toFixed(2)} µs/call  ${kb.toFixed(2)} KB/call`);
    }
  }
  engine.dropSession(session);
  engine.close();
}
