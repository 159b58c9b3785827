/**
 * CORS over real HTTP on loopback: preflights from an allowed origin get 204
 * with the methods and headers MCP uses; responses to it expose the session
 * and version headers (and `Retry-After`), with one `Vary: Origin`; the
 * `Mcp-Param-*` headers a preflight asks for are allowed, so a page can call
 * a tool that mirrors an argument into a header; the protected-resource
 * metadata path answers preflights; a disallowed origin gets no CORS headers
 * and is refused by the DNS-rebinding guard; without `cors` OPTIONS stays 405.
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

function preflight(
  url: string,
  origin: string,
  requested = "content-type, mcp-protocol-version, authorization",
): Promise<Response> {
  return fetch(url, {
    method: "OPTIONS",
    headers: {
      origin,
      "access-control-request-method": "POST",
      "access-control-request-headers": requested,
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
    assert.ok(!allowed.some((name) => name.startsWith("mcp-param-")), "none asked for");
    // One Origin (the preflight's own and the decoration's were both sent).
    assert.equal(response.headers.get("vary"), "Origin, Access-Control-Request-Headers");
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
      "mcp-session-id, mcp-protocol-version, www-authenticate, retry-after",
    );
    assert.equal(legacy.headers.get("vary"), "Origin");
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
    assert.equal(bad.headers.get("vary"), "Origin");
  } finally {
    await server.close();
  }
});

Deno.test("cors: the Mcp-Param-* headers a preflight asks for are allowed, and a tool that mirrors an argument is callable", async () => {
  const server = start({ cors: { origins: [APP] } });
  try {
    const response = await preflight(
      server.url,
      APP,
      "content-type,Mcp-Param-Region, mcp-param-page ,x-custom,mcp-param-, mcp-param-a b",
    );
    await response.body?.cancel();
    assert.equal(response.status, 204);
    const allowed = response.headers.get("access-control-allow-headers")!.split(", ");
    assert.ok(allowed.includes("mcp-param-region"));
    assert.ok(allowed.includes("mcp-param-page"));
    // Only Mcp-Param-* names are echoed: the rest of the list stays fixed.
    assert.ok(!allowed.includes("x-custom"));
    assert.ok(!allowed.includes("mcp-param-"));
    assert.ok(!allowed.some((name) => name.includes(" ")));
    // Bounded: a preflight asking for many gets at most 64 of them.
    const many = Array.from({ length: 200 }, (_, i) => `mcp-param-p${i}`).join(", ");
    const bounded = await preflight(server.url, APP, many);
    await bounded.body?.cancel();
    const echoed = bounded.headers.get("access-control-allow-headers")!.split(", ")
      .filter((name) => name.startsWith("mcp-param-"));
    assert.equal(echoed.length, 64);
    // What the browser then sends: the mirrored header, from the allowed origin.
    const called = await post(
      server.url,
      request2026(3, "tools/call", { name: "region_echo", arguments: { region: "eu-west-1" } }),
      { ...headers2026("tools/call", "region_echo"), "mcp-param-region": "eu-west-1", origin: APP },
    );
    const body = await called.json();
    assert.equal(called.status, 200, JSON.stringify(body));
    assert.equal(body.result.content[0].text, "region: eu-west-1");
    assert.equal(called.headers.get("access-control-allow-origin"), APP);
  } finally {
    await server.close();
  }
});

Deno.test("cors: a refusal with Retry-After exposes it to the page", async () => {
  const server = start({ cors: { origins: [APP] }, rateLimit: { perSecond: 1, burst: 1 } });
  try {
    let limited: Response | undefined;
    for (let i = 0; i < 10 && limited === undefined; i++) {
      const answer = await post(server.url, request2026(i, "server/discover"), {
        ...headers2026("server/discover"),
        origin: APP,
      });
      await answer.body?.cancel();
      if (answer.status === 429) limited = answer;
    }
    assert.ok(limited, "the rate limit answered 429");
    assert.ok(limited.headers.get("retry-after"));
    assert.equal(limited.headers.get("access-control-allow-origin"), APP);
    assert.ok(
      limited.headers.get("access-control-expose-headers")!.split(", ").includes("retry-after"),
    );
  } finally {
    await server.close();
  }
});

Deno.test("cors: the protected-resource metadata answers a preflight and GETs from an allowed origin", async () => {
  const auth = {
    verifyToken: () => Promise.reject(new Error("no token is verified here")),
    authorizationServers: ["https://auth.example.com"],
  };
  const server = start({ cors: { origins: [APP] }, auth });
  const bare = start({ auth });
  try {
    for (
      const path of [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
      ]
    ) {
      const url = new URL(path, server.url).href;
      const answer = await fetch(url, {
        method: "OPTIONS",
        headers: {
          origin: APP,
          "access-control-request-method": "GET",
          "access-control-request-headers": "mcp-protocol-version",
        },
      });
      await answer.body?.cancel();
      assert.equal(answer.status, 204, path);
      assert.equal(answer.headers.get("access-control-allow-origin"), APP);
      assert.ok(answer.headers.get("access-control-allow-methods")!.includes("GET"));
      assert.ok(
        answer.headers.get("access-control-allow-headers")!.split(", ").includes(
          "mcp-protocol-version",
        ),
      );
      const metadata = await fetch(url, {
        headers: { origin: APP, "mcp-protocol-version": "2025-11-25" },
      });
      assert.equal(metadata.status, 200);
      assert.equal((await metadata.json()).resource, server.url);
      assert.equal(metadata.headers.get("access-control-allow-origin"), APP);
      const evil = await fetch(url, {
        method: "OPTIONS",
        headers: { origin: "https://evil.example.com" },
      });
      await evil.body?.cancel();
      assert.equal(evil.status, 403);
      assert.equal(evil.headers.get("access-control-allow-origin"), null);
      // Without cors the metadata path still names the method it serves.
      const plain = await fetch(new URL(path, bare.url), { method: "OPTIONS" });
      await plain.body?.cancel();
      assert.equal(plain.status, 405);
      assert.equal(plain.headers.get("allow"), "GET");
    }
  } finally {
    await server.close();
    await bare.close();
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
