/**
 * Bytes allocated per request by a server on `Deno.serve` under wrk load, as
 * V8's sampling heap profiler estimates them (objects collected since
 * included), in the server's own process: `deno run -A bench/heap_per_request.ts
 * [raw|stateless|session|creation] [SECONDS]`. Unlike `allocation.ts` the
 * requests are Deno.serve's own (headers read through ops, the body taken
 * whole), so this is what a served request costs; wrk runs in its own
 * process and is not counted. The `raw` row is the floor: parse the body,
 * answer a fixed result.
 *
 * @module
 */

import { Session } from "node:inspector/promises";
import { createHttpHandler } from "@anubis/transport-http";
import { haveWrk, loadPost, loadSessionCreation } from "./http_load.ts";
import server from "./servers/echo_server.ts";
import { legacyCall, openSession, statelessCall, type WireRequest } from "./wire.ts";

interface ProfileNode {
  selfSize: number;
  children: ProfileNode[];
}

function totalOf(node: ProfileNode): number {
  let total = node.selfSize;
  for (const child of node.children) total += totalOf(child);
  return total;
}

const raw = async (request: Request): Promise<Response> => {
  const message = await request.json();
  if (message.id === undefined) return new Response(null, { status: 202 });
  return new Response(
    JSON.stringify({
      jsonrpc: "2.0",
      id: message.id,
      result: { content: [{ type: "text", text: "echo: hi" }] },
    }),
    { headers: { "content-type": "application/json" } },
  );
};

if (import.meta.main) {
  const [kind = "stateless", seconds = "5"] = Deno.args;
  if (!["raw", "stateless", "session", "creation"].includes(kind) || !(await haveWrk())) {
    console.error(
      "usage (needs wrk): bench/heap_per_request.ts [raw|stateless|session|creation] [S]",
    );
    Deno.exit(2);
  }
  const handler = kind === "raw"
    ? raw
    : createHttpHandler(server, { maxSessions: 1e7, maxSessionsPerClient: 1e7 });
  let served = 0;
  const listening = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen() {} },
    (request, info) => {
      served++;
      return handler(request, info);
    },
  );
  const url = `http://127.0.0.1:${listening.addr.port}/mcp`;
  let wire: WireRequest = statelessCall(1);
  let version = "2025-11-25";
  if (kind === "session" || kind === "creation") {
    const opened = await openSession(url);
    version = opened.version;
    wire = legacyCall(opened.sessionId, opened.version);
  }
  const load = (s: number) =>
    kind === "creation"
      ? loadSessionCreation(url, version, { connections: 32, seconds: s, warmupSeconds: 0 })
      : loadPost(url, wire, { connections: 32, seconds: s, warmupSeconds: 0 });
  await load(1);
  const inspector = new Session();
  inspector.connect();
  await inspector.post("HeapProfiler.startSampling", {
    samplingInterval: 512,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  const before = served;
  await load(Number(seconds));
  const requests = served - before;
  const { profile } = await inspector.post("HeapProfiler.stopSampling") as unknown as {
    profile: { head: ProfileNode };
  };
  inspector.disconnect();
  const perRequest = totalOf(profile.head) / requests;
  console.log(
    `${kind.padEnd(10)} ${
      (perRequest / 1024).toFixed(2)
    } KB per HTTP request (${requests} requests)`,
  );
  await listening.shutdown();
}
