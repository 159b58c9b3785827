/**
 * Fair slots and trusted proxies over real HTTP on loopback against
 * `cli serve examples/everything.ts --http`: clients are distinct source
 * addresses (127.0.0.2, 127.0.0.3, ...: the client socket is bound to each),
 * or clients named by a trusted proxy's `X-Forwarded-For`. A handful of
 * addresses holding their bounds does not lock a new client out of the
 * session table or the stream pool; behind a trusted proxy each client has
 * its own per-client bound and rate-limit bucket; forwarded headers from a
 * peer that is not trusted are ignored.
 */

import assert from "node:assert/strict";
import http from "node:http";
import { type HttpServerProcess, startHttpServer } from "../helpers/everything_http_server.ts";
import { initializeRequest, JSON_HEADERS } from "../helpers/http_helpers.ts";

/** One keep-alive agent per source address, so a client's requests reuse its sockets. */
const agents = new Map<string, http.Agent>();

function agentOf(from: string): http.Agent {
  let agent = agents.get(from);
  if (!agent) agents.set(from, agent = new http.Agent({ keepAlive: true, maxSockets: 8 }));
  return agent;
}

function closeAgents(): void {
  for (const agent of agents.values()) agent.destroy();
  agents.clear();
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A request sent from a source address; resolves with the whole answer (bounded: 20 s). */
function send(
  url: URL,
  from: string,
  options: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    const request = http.request({
      host: url.hostname,
      port: url.port,
      path: url.pathname,
      method: options.method ?? "POST",
      localAddress: from,
      agent: agentOf(from),
      headers: { ...JSON_HEADERS, ...options.headers },
      timeout: 20_000,
    }, (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk) => text += chunk);
      response.on(
        "end",
        () => resolve({ status: response.statusCode!, headers: response.headers, body: text }),
      );
      response.on("error", reject);
    });
    request.on("timeout", () => request.destroy(new Error("no answer within 20 s")));
    request.on("error", reject);
    request.end(body);
  });
}

/**
 * A finished handshake from `from`: the session id, or the refusal of the
 * initialize; `lost` when the session was gone by its `initialized` (another
 * initialize of the same client at its bound took its unfinished handshake).
 */
async function open(
  url: URL,
  from: string,
  headers: Record<string, string> = {},
): Promise<{ session?: string; refused?: Answer; lost?: true }> {
  const answer = await send(url, from, { headers, body: initializeRequest(1) });
  const session = answer.headers["mcp-session-id"] as string | undefined;
  if (answer.status !== 200 || !session) return { refused: answer };
  const done = await send(url, from, {
    headers: { ...headers, "mcp-session-id": session },
    body: { jsonrpc: "2.0", method: "notifications/initialized" },
  });
  if (done.status === 404) return { lost: true };
  assert.equal(done.status, 202);
  return { session };
}

/** A tools/call in a session. */
function call(url: URL, from: string, session: string, id = 7): Promise<Answer> {
  return send(url, from, {
    headers: { "mcp-session-id": session },
    body: {
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "test_simple_text", arguments: {} },
    },
  });
}

async function withServer(
  flags: string[],
  test: (url: URL, server: HttpServerProcess) => Promise<void>,
): Promise<void> {
  const server = await startHttpServer(flags);
  try {
    await test(server.url, server);
  } finally {
    closeAgents();
    await server.stop();
  }
}

Deno.test("fair slots: four addresses filling the table do not lock out a fifth; the evicted session gets 404", async () => {
  await withServer(["--max-sessions", "40", "--max-sessions-per-client", "10"], async (url) => {
    const holders = ["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"];
    const sessions = new Map<string, string[]>();
    for (const from of holders) {
      const held: string[] = [];
      for (let i = 0; i < 10; i++) held.push((await open(url, from)).session!);
      sessions.set(from, held);
    }
    const first = sessions.get("127.0.0.2")!;
    // The first holder's first session is used again: its least recently used is its second.
    assert.equal((await call(url, "127.0.0.2", first[0])).status, 200);
    // Table full (4 x 10 finished sessions): yesterday a new client got 503 Retry-After 1800.
    const newcomer = await open(url, "127.0.0.6");
    assert.ok(newcomer.session, `a new client is served: ${JSON.stringify(newcomer.refused)}`);
    assert.equal((await call(url, "127.0.0.6", newcomer.session)).status, 200);
    // The largest holder's least recently used idle session made room: 404, id echoed.
    const evicted = await call(url, "127.0.0.2", first[1], 41);
    assert.equal(evicted.status, 404);
    assert.deepEqual(JSON.parse(evicted.body).error.code, -32001);
    assert.equal(JSON.parse(evicted.body).id, 41);
    assert.equal((await call(url, "127.0.0.2", first[0])).status, 200);
    // The newcomer may take sessions back until everyone holds the same (5 x 8 = 40) ...
    for (let i = 1; i < 8; i++) {
      const more = await open(url, "127.0.0.6");
      assert.ok(more.session, `session ${i + 1} of the newcomer: ${JSON.stringify(more.refused)}`);
    }
    // ... and no further: taking one more would leave someone with fewer than it.
    const { refused } = await open(url, "127.0.0.6");
    assert.equal(refused?.status, 503);
    assert.ok(Number(refused.headers["retry-after"]) >= 1);
    assert.equal(JSON.parse(refused.body).error.message, "Too many sessions");
    // A sixth address, holding none, is still served (from a holder of 8).
    const sixth = await open(url, "127.0.0.7");
    assert.ok(sixth.session, JSON.stringify(sixth.refused));
  });
});

Deno.test("fair slots: two addresses holding every stream do not lock out a third; the oldest of the largest holder ends", async () => {
  await withServer(["--max-streams", "6", "--max-streams-per-client", "3"], async (url) => {
    const streams: { from: string; done: Promise<number> }[] = [];
    const get = (from: string, session: string) =>
      new Promise<{ status: number; done: Promise<number> }>((resolve, reject) => {
        const request = http.request({
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: "GET",
          localAddress: from,
          agent: false,
          headers: { accept: "text/event-stream", "mcp-session-id": session },
        }, (response) => {
          const done = new Promise<number>((ended) => {
            response.on("data", () => {});
            response.on("end", () => ended(Date.now()));
            response.on("close", () => ended(Date.now()));
          });
          resolve({ status: response.statusCode!, done });
        });
        request.on("error", reject);
        request.end();
      });
    try {
      for (const from of ["127.0.0.2", "127.0.0.3"]) {
        for (let i = 0; i < 3; i++) {
          const { session } = await open(url, from);
          const stream = await get(from, session!);
          assert.equal(stream.status, 200);
          streams.push({ from, done: stream.done });
        }
      }
      const { session } = await open(url, "127.0.0.4");
      const third = await get("127.0.0.4", session!);
      assert.equal(third.status, 200, "a new client gets a stream from a full pool");
      streams.push({ from: "127.0.0.4", done: third.done });
      // The first holder's oldest stream ended to make room (bounded wait: 10 s).
      const ended = await Promise.race([
        streams[0].done.then(() => "ended"),
        new Promise((resolve) => setTimeout(() => resolve("still open"), 10_000)),
      ]);
      assert.equal(ended, "ended");
      // The pool is full again with shares 2, 3, 1: the third address may take one
      // from the second (3 >= 1 + 2), but then no one holds two more than it.
      const { session: again } = await open(url, "127.0.0.4");
      assert.equal((await get("127.0.0.4", again!)).status, 200);
      const { session: last } = await open(url, "127.0.0.4");
      const refused = await get("127.0.0.4", last!);
      assert.equal(refused.status, 503);
    } finally {
      closeAgents();
    }
  });
});

Deno.test("trusted proxy: two clients behind one proxy each get their own session bound", async () => {
  await withServer(
    ["--trusted-proxy", "10.0.0.0/8,127.0.0.1", "--max-sessions-per-client", "3"],
    async (url) => {
      const alice = { "x-forwarded-for": "203.0.113.1" };
      const bob = { "x-forwarded-for": "198.51.100.9, 10.1.2.3" }; // through a second proxy
      for (let i = 0; i < 3; i++) assert.ok((await open(url, "127.0.0.1", alice)).session);
      const { refused } = await open(url, "127.0.0.1", alice);
      assert.equal(refused?.status, 429);
      assert.equal(JSON.parse(refused.body).error.message, "Too many sessions for this client");
      // Bob, behind the same proxy, is another client.
      for (let i = 0; i < 3; i++) assert.ok((await open(url, "127.0.0.1", bob)).session);
      assert.equal((await open(url, "127.0.0.1", bob)).refused?.status, 429);
      // The RFC 7239 header names clients too.
      const carol = { forwarded: 'for="[2001:db8::7]:4711";proto=http' };
      assert.ok((await open(url, "127.0.0.1", carol)).session);
    },
  );
});

Deno.test("trusted proxy: two clients behind one proxy each get their own rate-limit bucket", async () => {
  await withServer(
    ["--trusted-proxy", "127.0.0.1", "--rate-limit", "0.1/s", "--rate-limit-burst", "3"],
    async (url) => {
      const ping = (client: string) =>
        send(url, "127.0.0.1", {
          headers: { "x-forwarded-for": client },
          body: initializeRequest(1),
        });
      for (let i = 0; i < 3; i++) assert.equal((await ping("203.0.113.1")).status, 200);
      const limited = await ping("203.0.113.1");
      assert.equal(limited.status, 429);
      assert.match(JSON.parse(limited.body).error.message, /rate limit/);
      // Another client behind the same proxy has its bucket whole.
      for (let i = 0; i < 3; i++) assert.equal((await ping("203.0.113.2")).status, 200);
    },
  );
});

Deno.test("trusted proxy: forwarded headers from a peer that is not trusted are ignored", async () => {
  await withServer(
    ["--trusted-proxy", "127.0.0.1", "--max-sessions-per-client", "2"],
    async (url) => {
      // 127.0.0.2 is not a trusted proxy: its made-up addresses change nothing.
      for (let i = 0; i < 2; i++) {
        const spoofed = { "x-forwarded-for": `192.0.2.${i}`, forwarded: `for=192.0.2.${i}` };
        assert.ok((await open(url, "127.0.0.2", spoofed)).session);
      }
      const { refused } = await open(url, "127.0.0.2", { "x-forwarded-for": "192.0.2.99" });
      assert.equal(refused?.status, 429);
      assert.equal(
        (await open(url, "127.0.0.2", { forwarded: "for=192.0.2.98" })).refused?.status,
        429,
      );
    },
  );
});

Deno.test("fair slots, defaults: 10 addresses x 1,000 finished sessions (the full table) do not lock out an eleventh, and forwarded headers are ignored", async () => {
  await withServer([], async (url) => {
    const holders = Array.from({ length: 10 }, (_, i) => `127.0.0.${i + 2}`);
    // Each address opens sessions until refused (bounded: 1,100 tries), 8 at a time.
    const held = new Map<string, number>();
    const statuses = new Map<number, number>();
    await Promise.all(holders.map(async (from) => {
      let count = 0;
      let tries = 0;
      let refused = false;
      const worker = async () => {
        while (!refused && tries++ < 1_100) {
          // A made-up forwarded address per try: ignored without --trusted-proxy.
          const result = await open(url, from, { "x-forwarded-for": `192.0.2.${tries % 250}` });
          if (result.session) count++;
          else if (result.refused) {
            refused = true;
            statuses.set(result.refused!.status, (statuses.get(result.refused!.status) ?? 0) + 1);
          }
        }
      };
      await Promise.all(Array.from({ length: 8 }, worker));
      held.set(from, count);
    }));
    // The default per-client bound held each address to 1,000: the default table is full.
    assert.deepEqual([...new Set(held.values())], [1_000], JSON.stringify([...held]));
    assert.deepEqual([...statuses.keys()], [429]);
    const newcomer = await open(url, "127.0.0.12");
    assert.ok(newcomer.session, `a new client is served: ${JSON.stringify(newcomer.refused)}`);
    assert.equal((await call(url, "127.0.0.12", newcomer.session)).status, 200);
  });
});

Deno.test("trusted proxy: a --trusted-proxy that is not a CIDR stops cli serve at start, saying so", async () => {
  await assert.rejects(
    () => startHttpServer(["--trusted-proxy", "10.0.0.0/8,10.0.0.0/33"]),
    /not a CIDR .*: 10\.0\.0\.0\/33/,
  );
});
