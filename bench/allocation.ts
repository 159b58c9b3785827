/**
 * Bytes allocated per request, in process and without a collection in the
 * way: `deno run -A --v8-flags=--min-semi-space-size=256,--max-semi-space-size=256,--expose-gc
 * bench/allocation.ts [ROUNDS]`.
 *
 * Calls each handler directly with a real `Request` (what `Deno.serve` hands
 * it) and reads the whole answer, ROUNDS times after a warm-up, and divides
 * the growth of the heap by ROUNDS. With a young generation bigger than what
 * the rounds allocate, no scavenge runs during them, so the growth is what was
 * allocated. Unlike time, this does not move with the machine's load. The raw
 * row (parse the body, answer a fixed result) is the floor.
 *
 * @module
 */

import { createHttpHandler } from "@anubis/transport-http";
import server from "./servers/echo_server.ts";
import {
  legacyCall,
  legacyInitialize,
  legacyInitialized,
  openSession,
  statelessCall,
  type WireRequest,
} from "./wire.ts";

type Handler = (request: Request) => Promise<Response>;

const gc = (globalThis as { gc?: () => void }).gc;

const URL_ = "http://127.0.0.1/mcp";

// With the `Content-Length` every client sends (wrk, fetch), so the handler
// reads the body as it does under `Deno.serve`, not as an unannounced stream.
const announced = new WeakMap<WireRequest, Record<string, string>>();
function headersOf(wire: WireRequest): Record<string, string> {
  let headers = announced.get(wire);
  if (!headers) {
    const length = String(new TextEncoder().encode(wire.body).byteLength);
    announced.set(wire, headers = { ...wire.headers, "content-length": length });
  }
  return headers;
}

async function send(handler: Handler, wire: WireRequest): Promise<Response> {
  const response = await handler(
    new Request(URL_, { method: "POST", body: wire.body, headers: headersOf(wire) }),
  );
  await response.text();
  return response;
}

/** One session: `initialize`, then `notifications/initialized` with its id. */
async function openOne(handler: Handler, init: WireRequest, version: string) {
  const response = await send(handler, init);
  const id = response.headers.get("mcp-session-id");
  if (id === null) throw new Error(`initialize failed: ${response.status}`);
  await send(handler, legacyInitialized(id, version));
}

async function bytesPerRequest(handler: Handler, wire: WireRequest | "session", rounds: number) {
  const init = legacyInitialize();
  const version = JSON.parse(init.body).params.protocolVersion;
  const once = wire === "session"
    ? () => openOne(handler, init, version)
    : () => send(handler, wire);
  for (let i = 0; i < 2_000; i++) await once();
  const samples: number[] = [];
  for (let s = 0; s < 5; s++) {
    gc?.();
    const before = Deno.memoryUsage().heapUsed;
    for (let i = 0; i < rounds; i++) await once();
    samples.push((Deno.memoryUsage().heapUsed - before) / rounds);
  }
  samples.sort((a, b) => a - b);
  return samples[2];
}

const raw: Handler = async (request) => {
  const message = await request.json();
  return new Response(
    JSON.stringify({
      jsonrpc: "2.0",
      id: message.id,
      result: { content: [{ type: "text", text: "hello" }] },
    }),
    { headers: { "content-type": "application/json" } },
  );
};

if (import.meta.main) {
  if (gc === undefined) {
    console.error("allocation: run with --v8-flags=--expose-gc,--max-semi-space-size=512");
  }
  const rounds = Number(Deno.args[0] ?? 5_000);
  const handler = createHttpHandler(server);
  const rows: [string, Handler, WireRequest | "session"][] = [
    ["raw (parse, fixed answer)", raw, statelessCall(1)],
    ["stateless tools/call", handler, statelessCall(1)],
  ];
  const listening = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, handler);
  const session = await openSession(`http://127.0.0.1:${listening.addr.port}/mcp`);
  rows.push(["session tools/call", handler, legacyCall(session.sessionId, session.version)]);
  // Its own handler, with the session bounds raised above what the rounds open.
  const opener = createHttpHandler(server, { maxSessions: 1e6, maxSessionsPerClient: 1e6 });
  rows.push(["session creation (per session)", opener, "session"]);
  for (const [name, h, wire] of rows) {
    const bytes = await bytesPerRequest(h, wire, rounds);
    const unit = wire === "session" ? "session" : "request";
    console.log(`${name.padEnd(32)} ${(bytes / 1024).toFixed(2)} KB/${unit}`);
  }
  await listening.shutdown();
  opener.close();
  handler.close();
}
