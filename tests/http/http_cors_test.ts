/**
 * CORS over real HTTP on loopback: preflights from an allowed origin get 204
 * with the methods and headers MCP uses; responses to it expose the session
 * and version headers; a disallowed origin gets no CORS headers and is
 * refused by the DNS-rebinding guard; without `cors` OPTIONS stays 405.
 */

import assert from "node:assert/strict";
import {
  headers2026,
  initializeRequest,
  post,
  request2026,
  start,
} from "../helpers/http_helpers.ts";

const APP = "https://app.example.com";

function preflight(url: string, origin: string): Promise<Response> {
  return fetch(url, {
    method: "OPTIONS",
    headers: {
      origin,
      "access-control-request-method": "POST",
      "access-control-request-headers": "content-type, mcp-protocol-version, authorization",
    },
  });
}

Deno.test("cors: a preflight from an allowed origin is answered with MCP's methods and headers", async () => {
  const server = start({ cors: { origins: [APP] } });
  try {
    const response = await preflight(server.url, APP);
    await response.body?.cancel();
    assert.equal(response.status, 204);
    assert.equal(response.headers.get("access-control-allow-origin"), APP);
    assert.equal(response.headers.get("access-control-allow-methods"), "POST, GET, DELETE");
    const allowed = response.headers.get("access-control-allow-headers")!.split(", ");
    for (
      const name of [
        "content-type",
        "accept",
        "authorization",
        "mcp-session-id",
        "mcp-protocol-version",
        "mcp-method",
        "mcp-name",
        "last-event-id",
      ]
    ) assert.ok(allowed.includes(name), name);
    assert.match(response.headers.get("vary")!, /Origin/);
  } finally {
    await server.close();
  }
});

Deno.test("cors: responses to an allowed origin expose the MCP headers, in both eras", async () => {
  const server = start({ cors: { origins: [APP] } });
  try {
    const legacy = await post(server.url, initializeRequest(1), { origin: APP });
    await legacy.body?.cancel();
    assert.equal(legacy.status, 200);
    assert.ok(legacy.headers.get("mcp-session-id"));
    assert.equal(legacy.headers.get("access-control-allow-origin"), APP);
    assert.equal(
      legacy.headers.get("access-control-expose-headers"),
      "mcp-session-id, mcp-protocol-version, www-authenticate",
    );
    const stateless = await post(server.url, request2026(2, "server/discover"), {
      ...headers2026("server/discover"),
      origin: APP,
    });
    const body = await stateless.json();
    assert.equal(stateless.status, 200, JSON.stringify(body));
    assert.equal(stateless.headers.get("access-control-allow-origin"), APP);
    // An error answer carries the headers too, so the page can read it.
    const bad = await post(server.url, "{", { origin: APP });
    await bad.body?.cancel();
    assert.equal(bad.status, 400);
    assert.equal(bad.headers.get("access-control-allow-origin"), APP);
  } finally {
    await server.close();
  }
});

Deno.test("cors: a disallowed origin gets no CORS headers; only the listed origins are added to the guard", async () => {
  const server = start({ cors: { origins: [APP] } });
  try {
    const evil = await preflight(server.url, "https://evil.example.com");
    await evil.body?.cancel();
    assert.equal(evil.status, 403);
    assert.equal(evil.headers.get("access-control-allow-origin"), null);
    const evilPost = await post(server.url, request2026(1, "server/discover"), {
      ...headers2026("server/discover"),
      origin: "https://evil.example.com",
    });
    await evilPost.body?.cancel();
    assert.equal(evilPost.status, 403);
    assert.equal(evilPost.headers.get("access-control-allow-origin"), null);
    // A loopback origin passes the guard (same-machine tools) but gets no CORS headers.
    const local = await preflight(server.url, "http://localhost:3000");
    await local.body?.cancel();
    assert.equal(local.status, 403);
    const localPost = await post(server.url, request2026(2, "server/discover"), {
      ...headers2026("server/discover"),
      origin: "http://localhost:3000",
    });
    await localPost.body?.cancel();
    assert.equal(localPost.status, 200);
    assert.equal(localPost.headers.get("access-control-allow-origin"), null);
  } finally {
    await server.close();
  }
});

Deno.test("cors: without the option the origin is refused and OPTIONS stays 405", async () => {
  const server = start();
  try {
    const response = await preflight(server.url, APP);
    await response.body?.cancel();
    assert.equal(response.status, 403);
    assert.equal(response.headers.get("access-control-allow-origin"), null);
    const local = await preflight(server.url, "http://localhost:3000");
    await local.body?.cancel();
    assert.equal(local.status, 405);
    assert.equal(local.headers.get("access-control-allow-origin"), null);
    const refused = await post(server.url, request2026(1, "server/discover"), {
      ...headers2026("server/discover"),
      origin: APP,
    });
    await refused.body?.cancel();
    assert.equal(refused.status, 403);
  } finally {
    await server.close();
  }
});
