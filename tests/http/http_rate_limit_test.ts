/**
 * Per-caller rate limits over real HTTP on loopback: the request past the
 * burst gets 429 with `Retry-After` and a JSON-RPC error body; another
 * principal has its own bucket; the server keeps serving.
 */

import assert from "node:assert/strict";
import { createHttpHandler } from "@anubis/transport-http";
import { headers2026, post, request2026, start, testServer } from "../helpers/http_helpers.ts";

const discover = (url: string, headers: Record<string, string> = {}) =>
  post(url, request2026(1, "server/discover"), { ...headers2026("server/discover"), ...headers });

// A refill of one request per 1,000 s: nothing refills during the test, however slow the machine.
const SLOW = { perSecond: 0.001, burst: 3 };

Deno.test("rate limit: the request past the burst of one client address is 429 with Retry-After", async () => {
  const server = start({ rateLimit: SLOW });
  try {
    for (let i = 0; i < 3; i++) {
      const ok = await discover(server.url);
      await ok.body?.cancel();
      assert.equal(ok.status, 200);
    }
    const limited = await discover(server.url);
    const body = await limited.json();
    assert.equal(limited.status, 429);
    assert.equal(body.jsonrpc, "2.0");
    assert.equal(body.error.code, -32000);
    assert.ok(Number(limited.headers.get("retry-after")) > 0);
  } finally {
    await server.close();
  }
});

Deno.test("rate limit: with auth each principal has its own bucket", async () => {
  const server = start({
    rateLimit: SLOW,
    auth: { verifyToken: (token) => Promise.resolve({ subject: token, scopes: [] }) },
  });
  try {
    const as = (subject: string) => ({ authorization: `Bearer ${subject}` });
    const statuses: number[] = [];
    for (const subject of ["ada", "ada", "ada", "ada", "bob", "bob"]) {
      const response = await discover(server.url, as(subject));
      await response.body?.cancel();
      statuses.push(response.status);
    }
    assert.deepEqual(statuses, [200, 200, 200, 429, 200, 200]);
  } finally {
    await server.close();
  }
});

Deno.test("rate limit: without auth, the client key a front middleware passes is the bucket", async () => {
  // Behind a proxy every caller has the proxy's address; the middleware names the client.
  const handler = createHttpHandler(testServer(), { keepAliveMs: 0, rateLimit: SLOW });
  const httpServer = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (request) => handler(request, { client: request.headers.get("x-forwarded-for") ?? undefined }),
  );
  const url = `http://127.0.0.1:${httpServer.addr.port}/mcp`;
  try {
    const statuses: number[] = [];
    for (const client of ["10.0.0.1", "10.0.0.1", "10.0.0.1", "10.0.0.1", "10.0.0.2"]) {
      const response = await discover(url, { "x-forwarded-for": client });
      await response.body?.cancel();
      statuses.push(response.status);
    }
    assert.deepEqual(statuses, [200, 200, 200, 429, 200]);
  } finally {
    handler.close();
    await httpServer.shutdown();
  }
});
