/**
 * The edges of OAuth resource-server auth, over real HTTP on loopback
 * against `cli serve --http --auth-issuer --auth-jwks` with real RS256 JWTs
 * (`jose`) and a JWKS endpoint in this process that can be up, down (503)
 * or hanging, counting its fetches:
 *
 * - the audience is the URL listened on, never the request's `Host`, and
 *   the token cache does not launder a token across Hosts;
 * - a token's `client_id` never names a subject's principal; a token with
 *   neither `sub` nor `client_id` is refused;
 * - a JWKS endpoint that is down is fetched once per cooldown, not per
 *   request, and the answers are 503 with `Retry-After` at once; one that
 *   hangs costs one timeout, then fast answers;
 * - a key set whose key cannot be used is the server's fault: 503, never
 *   401, with no path or URL in the answer;
 * - requests with invalid tokens count toward the client's rate limit;
 * - 401, 403, 429 and 503 bodies echo the request's id when it was readable.
 */

import assert from "node:assert/strict";
import * as jose from "jose";
import { defineServer } from "@anubis/core";
import { jwtVerifier } from "@anubis/transport-http";
import { type HttpServerProcess, startCli } from "../helpers/everything_http_server.ts";
import {
  headers2026,
  initializeRequest,
  post,
  request2026,
  start,
} from "../helpers/http_helpers.ts";

const ISSUER = "https://issuer.test";
const { publicKey, privateKey } = await jose.generateKeyPair("RS256", { extractable: true });
const rotated = await jose.generateKeyPair("RS256", { extractable: true });
const jwk = { ...(await jose.exportJWK(publicKey)), kid: "k1", alg: "RS256", use: "sig" };

/** A JWKS endpoint on loopback whose answer the test chooses, counting fetches. */
class JwksEndpoint {
  mode: "up" | "down" | "hang" | "unusable" = "up";
  fetches = 0;
  readonly #held: (() => void)[] = [];
  readonly #server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => {
    this.fetches++;
    if (this.mode === "up") return Response.json({ keys: [jwk] });
    if (this.mode === "down") return new Response("down", { status: 503 });
    // A key set that parses, whose key k1 no platform can import (a 1-byte modulus).
    if (this.mode === "unusable") return Response.json({ keys: [{ ...jwk, n: "AQ" }] });
    // Hanging: answered only when the test ends.
    return new Promise<Response>((resolve) =>
      this.#held.push(() => resolve(new Response("late", { status: 503 })))
    );
  });
  readonly url = `http://127.0.0.1:${this.#server.addr.port}/jwks`;

  async close(): Promise<void> {
    for (const release of this.#held.splice(0)) release();
    await this.#server.shutdown();
  }
}

const now = () => Math.floor(Date.now() / 1000);

/** A signed access token with these claims (`sub`, `aud`, `client_id`… only as given). */
function sign(
  claims: Record<string, unknown>,
  { kid = "k1", key = privateKey }: { kid?: string; key?: CryptoKey } = {},
): Promise<string> {
  return new jose.SignJWT({ scope: "mcp", ...claims })
    .setProtectedHeader({ alg: "RS256", kid })
    .setIssuer(ISSUER)
    .setIssuedAt()
    .setExpirationTime(now() + 600)
    .sign(key);
}

/** `cli serve <module> --http` (hello by default) with auth on the endpoint, and `flags`. */
function serveWithAuth(
  jwks: JwksEndpoint,
  flags: string[] = [],
  module = "examples/hello.ts",
): Promise<HttpServerProcess> {
  return startCli(module, [
    "--port",
    "0",
    "--auth-issuer",
    ISSUER,
    "--auth-jwks",
    jwks.url,
    ...flags,
  ]);
}

/** A stateless (2026-07-28) `server/discover` with this id and token. */
function ping(url: URL | string, id: number | string, bearer?: string): Promise<Response> {
  return post(String(url), request2026(id, "server/discover"), {
    ...headers2026("server/discover"),
    ...(bearer === undefined ? {} : { authorization: `Bearer ${bearer}` }),
  });
}

/** A POST sent on a raw connection with the `Host` header given: its status and body. */
async function postWithHost(
  url: URL,
  host: string,
  bearer: string,
  id: number,
): Promise<{ status: number; body: string }> {
  const text = JSON.stringify(request2026(id, "server/discover"));
  const socket = await Deno.connect({ hostname: "127.0.0.1", port: Number(url.port) });
  const head = `POST ${url.pathname} HTTP/1.1\r\nhost: ${host}\r\nconnection: close\r\n` +
    `content-type: application/json\r\naccept: application/json, text/event-stream\r\n` +
    `mcp-protocol-version: 2026-07-28\r\nmcp-method: server/discover\r\n` +
    `authorization: Bearer ${bearer}\r\ncontent-length: ${new TextEncoder().encode(text).length}` +
    `\r\n\r\n${text}`;
  await socket.write(new TextEncoder().encode(head));
  // The server closes the connection after its answer (connection: close).
  const answer = await new Response(socket.readable).text();
  return {
    status: Number(answer.split(" ")[1]),
    body: answer.slice(answer.indexOf("\r\n\r\n") + 4),
  };
}

Deno.test("auth edges: the audience is the URL listened on, never the request's Host, and the cache launders nothing", async () => {
  const jwks = new JwksEndpoint();
  const server = await serveWithAuth(jwks);
  try {
    const real = server.url.host;
    // A token minted for a resource on another port of this host.
    const foreign = await sign({ sub: "ada", aud: "http://127.0.0.1:9999/mcp" });
    const named = await postWithHost(server.url, "127.0.0.1:9999", foreign, 1);
    assert.equal(named.status, 401, named.body);
    assert.match(named.body, /aud claim is not accepted/);
    const plain = await postWithHost(server.url, real, foreign, 2);
    assert.equal(plain.status, 401, plain.body);
    // A token for the URL listened on is accepted whatever loopback Host names it.
    const own = await sign({ sub: "ada", aud: server.url.href });
    for (const host of [real, `localhost:${server.url.port}`, "127.0.0.1:9999"]) {
      const ok = await postWithHost(server.url, host, own, 3);
      assert.equal(ok.status, 200, `${host}: ${ok.body}`);
    }
    // The metadata names the URL listened on, whatever the Host.
    const socket = await Deno.connect({ hostname: "127.0.0.1", port: Number(server.url.port) });
    await socket.write(
      new TextEncoder().encode(
        "GET /.well-known/oauth-protected-resource/mcp HTTP/1.1\r\nhost: 127.0.0.1:9999\r\n" +
          "connection: close\r\n\r\n",
      ),
    );
    const metadata = await new Response(socket.readable).text();
    assert.match(metadata, new RegExp(`"resource":"${server.url.href.replaceAll(".", "\\.")}"`));
  } finally {
    await server.stop();
    await jwks.close();
  }
});

Deno.test("auth edges: a client_id never names a subject's principal; a token naming neither is refused", async () => {
  const jwks = new JwksEndpoint();
  const server = await serveWithAuth(jwks);
  try {
    const aud = server.url.href;
    const alice = await sign({ sub: "alice", client_id: "app", aud });
    const posing = await sign({ client_id: "alice", aud });
    const nobody = await sign({ aud });
    const init = await post(server.url.href, initializeRequest(1), {
      authorization: `Bearer ${alice}`,
    });
    await init.body?.cancel();
    assert.equal(init.status, 200);
    const session = init.headers.get("mcp-session-id")!;
    const inSession = (bearer: string) =>
      post(server.url.href, { jsonrpc: "2.0", id: 2, method: "ping" }, {
        authorization: `Bearer ${bearer}`,
        "mcp-session-id": session,
        "mcp-protocol-version": "2025-11-25",
      });
    // Nor one whose client_id spells the issuer-qualified principal of alice.
    const spelling = await sign({ client_id: `${ISSUER}#alice`, aud });
    for (const bearer of [posing, spelling]) {
      const hijack = await inSession(bearer);
      await hijack.body?.cancel();
      assert.equal(hijack.status, 404, "a client_id is not subject alice");
    }
    const owner = await inSession(alice);
    await owner.body?.cancel();
    assert.equal(owner.status, 200);
    // A client-credentials token (no sub) still works, as a principal of its own.
    const own = await post(server.url.href, initializeRequest(3), {
      authorization: `Bearer ${posing}`,
    });
    await own.body?.cancel();
    assert.equal(own.status, 200);
    const refused = await ping(server.url, 4, nobody);
    const body = await refused.json();
    assert.equal(refused.status, 401);
    assert.equal(body.id, 4);
    assert.match(body.error.message, /neither a subject nor a client/);
    assert.match(refused.headers.get("www-authenticate")!, /error="invalid_token"/);
  } finally {
    await server.stop();
    await jwks.close();
  }
});

Deno.test("auth edges: a JWKS endpoint that is down is fetched once per cooldown, and each request gets 503 with Retry-After", async () => {
  const jwks = new JwksEndpoint();
  jwks.mode = "down";
  const server = await serveWithAuth(jwks);
  try {
    const bearer = await sign({ sub: "ada", aud: server.url.href });
    const statuses = new Set<number>();
    for (let i = 0; i < 40; i++) {
      const response = await ping(server.url, i, bearer);
      const body = await response.json();
      statuses.add(response.status);
      assert.equal(body.id, i);
      assert.ok(Number(response.headers.get("retry-after")) >= 1);
      assert.equal(response.headers.get("www-authenticate"), null);
      assert.doesNotMatch(JSON.stringify(body), /jwks|127\.0\.0\.1/, "no URL or path leaks");
    }
    assert.deepEqual([...statuses], [503]);
    assert.equal(jwks.fetches, 1, "one fetch for 40 requests (the cooldown is 30 s)");
  } finally {
    const { stderr } = await server.stop();
    await jwks.close();
    assert.match(stderr, /auth\.jwks_failed|JWKS could not be fetched/);
  }
});

Deno.test("auth edges: a JWKS key the server cannot use is its own fault: 503 without a path, never 401", async () => {
  const jwks = new JwksEndpoint();
  jwks.mode = "unusable";
  const server = await serveWithAuth(jwks);
  try {
    const bearer = await sign({ sub: "ada", aud: server.url.href });
    for (let i = 0; i < 3; i++) {
      const response = await ping(server.url, i, bearer);
      const body = await response.json();
      assert.equal(response.status, 503, JSON.stringify(body));
      assert.equal(body.id, i);
      assert.ok(Number(response.headers.get("retry-after")) >= 1);
      assert.equal(response.headers.get("www-authenticate"), null);
      assert.doesNotMatch(JSON.stringify(body), /jwks|127\.0\.0\.1|\/work|node_modules|file:/);
    }
  } finally {
    const { stderr } = await server.stop();
    await jwks.close();
    // The operator learns the cause from the log, once for the three.
    assert.equal(stderr.match(/the JWT verifier failed: the keys could not be used/g)?.length, 1);
  }
});

Deno.test("auth edges: a hanging JWKS endpoint costs one fetch timeout, then answers at once during the cooldown", async () => {
  const jwks = new JwksEndpoint();
  jwks.mode = "hang";
  const server = await serveWithAuth(jwks);
  try {
    const bearer = await sign({ sub: "ada", aud: server.url.href });
    for (let i = 0; i < 20; i++) {
      const response = await ping(server.url, i, bearer);
      const body = await response.json();
      assert.equal(response.status, 503, JSON.stringify(body));
      assert.equal(body.id, i);
    }
    // Only the first request waited for a fetch; the others were answered without one.
    assert.equal(jwks.fetches, 1);
  } finally {
    await server.stop();
    await jwks.close();
  }
});

Deno.test("auth edges: requests with invalid tokens count toward the client's rate limit; a valid caller keeps its own", async () => {
  const jwks = new JwksEndpoint();
  // One request per 1,000 s: nothing refills during the test.
  const server = await serveWithAuth(jwks, ["--rate-limit", "0.001/s", "--rate-limit-burst", "3"]);
  try {
    const forged = await sign({ sub: "ada", aud: server.url.href }, { key: rotated.privateKey });
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const response = await ping(server.url, `bad-${i}`, i % 2 === 0 ? forged : "not.a.jwt");
      const body = await response.json();
      statuses.push(response.status);
      assert.equal(body.id, `bad-${i}`);
      if (response.status === 429) assert.ok(Number(response.headers.get("retry-after")) > 0);
    }
    assert.deepEqual(statuses, [401, 401, 401, 429, 429, 429]);
    const valid = await ping(server.url, 7, await sign({ sub: "bob", aud: server.url.href }));
    await valid.body?.cancel();
    assert.equal(valid.status, 200, "a valid caller has its own bucket");
  } finally {
    await server.stop();
    await jwks.close();
  }
});

Deno.test("auth edges: without --rate-limit, invalid tokens are still limited per address (bursts of 40), and valid callers are not", async () => {
  const jwks = new JwksEndpoint();
  const server = await serveWithAuth(jwks);
  try {
    // Sent back to back until the first 429 (bounded): the burst of 40 passes,
    // then the bucket refills at 20 a second, slower than a loopback loop sends.
    const statuses: number[] = [];
    for (let i = 0; i < 400 && !statuses.includes(429); i++) {
      const response = await ping(server.url, i, "not.a.jwt");
      const body = await response.json();
      if (response.status === 429) assert.equal(body.id, i);
      statuses.push(response.status);
    }
    const refused = statuses.indexOf(429);
    assert.ok(refused >= 40, `the first 429 came at request ${refused}, inside the burst`);
    assert.ok(statuses.slice(0, refused).every((status) => status === 401));
    const token = await sign({ sub: "bob", aud: server.url.href });
    for (let i = 0; i < 45; i++) {
      const valid = await ping(server.url, 100 + i, token);
      await valid.body?.cancel();
      assert.equal(valid.status, 200, "valid callers draw on no bucket without --rate-limit");
    }
  } finally {
    await server.stop();
    await jwks.close();
  }
});

Deno.test("auth edges: refusals echo the id they could read; a large or unannounced body is not read for it", async () => {
  const jwks = new JwksEndpoint();
  const server = await serveWithAuth(jwks);
  try {
    const none = await ping(server.url, 41);
    assert.equal(none.status, 401);
    assert.equal((await none.json()).id, 41);
    const bad = await ping(server.url, "x-42", "not.a.jwt");
    assert.equal(bad.status, 401);
    assert.equal((await bad.json()).id, "x-42");
    // Over 16 KiB: not read, id null.
    const large = await post(server.url.href, {
      jsonrpc: "2.0",
      id: 43,
      method: "ping",
      params: { _meta: { pad: "x".repeat(20_000) } },
    });
    assert.equal(large.status, 401);
    assert.equal((await large.json()).id, null);
    // Unannounced (chunked): not read, id null.
    const chunked = await fetch(server.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: ReadableStream.from([
        new TextEncoder().encode('{"jsonrpc":"2.0","id":44,"method":"ping"}'),
      ]),
    });
    assert.equal(chunked.status, 401);
    assert.equal((await chunked.json()).id, null);
  } finally {
    await server.stop();
    await jwks.close();
  }
});

Deno.test("auth edges: a 403 insufficient_scope echoes the id; stale keys are used while the JWKS is down, an unknown kid gets 503", async () => {
  const jwks = new JwksEndpoint();
  const s = start({
    auth: {
      verifyToken: jwtVerifier({
        issuer: ISSUER,
        jwksUrl: jwks.url,
        jwksCacheMs: 50,
        jwksCooldownMs: 100,
      }),
      requiredScopes: ["mcp:admin"],
    },
  }, defineServer({ name: "scoped", version: "1.0.0" }));
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  try {
    const user = await sign({ sub: "ada", aud: s.url });
    const forbidden = await ping(s.url, 51, user);
    assert.equal(forbidden.status, 403);
    assert.equal((await forbidden.json()).id, 51);
    assert.equal(jwks.fetches, 1);

    const admin = await sign({ sub: "ada", aud: s.url, scope: "mcp:admin" });
    jwks.mode = "down";
    await pause(200); // past the key cache and the cooldown
    const stale = await ping(s.url, 52, admin);
    await stale.body?.cancel();
    assert.equal(stale.status, 200, "the keys fetched before are kept");
    assert.equal(jwks.fetches, 2);
    // A key not seen yet, with the endpoint down: the server's fault, at once.
    const unknown = await sign({ sub: "ada", aud: s.url, scope: "mcp:admin" }, {
      kid: "k2",
      key: rotated.privateKey,
    });
    const unavailable = await ping(s.url, 53, unknown);
    assert.equal(unavailable.status, 503);
    assert.equal((await unavailable.json()).id, 53);
    assert.ok(Number(unavailable.headers.get("retry-after")) >= 1);
    assert.equal(jwks.fetches, 2, "no fetch during the cooldown");
  } finally {
    await s.close();
    await jwks.close();
  }
});

/** A stateless-era (2026-07-28) request with this token (`params` default to `{ name }`). */
function stateless(
  url: URL,
  bearer: string,
  id: number,
  method: string,
  name?: string,
  params: Record<string, unknown> = name === undefined ? {} : { name },
): Promise<Response> {
  return post(String(url), request2026(id, method, params), {
    ...headers2026(method, name),
    authorization: `Bearer ${bearer}`,
  });
}

/** The scoped helper server behind an RS256 issuer, with a token lacking `mcp:admin` and one holding it. */
async function serveScoped() {
  const jwks = new JwksEndpoint();
  const server = await serveWithAuth(jwks, [], "tests/helpers/scoped_server.ts");
  const aud = String(server.url);
  return {
    jwks,
    server,
    plain: await sign({ sub: "ada", aud }),
    admin: await sign({ sub: "ada", aud, scope: "mcp mcp:admin" }),
  };
}

Deno.test("auth edges: a tool needing a scope the token lacks is hidden and answers 403 insufficient_scope naming it (step-up), in both eras", async () => {
  const { jwks, server, plain, admin } = await serveScoped();
  try {
    const names = async (response: Response) =>
      ((await response.json()).result.tools as { name: string }[]).map((t) => t.name);

    // Stateless: hidden from the list, 403 + challenge at the call, the id echoed.
    assert.deepEqual(await names(await stateless(server.url, plain, 1, "tools/list")), ["whoami"]);
    const refused = await stateless(server.url, plain, 2, "tools/call", "purge");
    assert.equal(refused.status, 403);
    const challenge = refused.headers.get("www-authenticate") ?? "";
    assert.match(challenge, /^Bearer /);
    assert.match(challenge, /error="insufficient_scope"/);
    assert.match(challenge, /scope="mcp:admin"/);
    assert.match(
      challenge,
      /resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource/,
    );
    const body = await refused.json();
    assert.equal(body.id, 2);
    assert.deepEqual(body.error.data, { name: "purge", scopes: ["mcp:admin"] });
    // A tool that does not exist stays unknown (no 403, no challenge).
    const unknown = await stateless(server.url, plain, 3, "tools/call", "nothing");
    assert.notEqual(unknown.status, 403);
    assert.equal(unknown.headers.get("www-authenticate"), null);
    assert.match((await unknown.json()).error.message, /Unknown tool/);
    // With the scope: listed and called.
    assert.deepEqual(await names(await stateless(server.url, admin, 4, "tools/list")), [
      "purge",
      "whoami",
    ]);
    const called = await stateless(server.url, admin, 5, "tools/call", "purge");
    assert.equal(called.status, 200);
    assert.equal((await called.json()).result.content[0].text, "purged");

    // Legacy session (2025-11-25): the same.
    const auth = { authorization: `Bearer ${plain}` };
    const opened = await post(String(server.url), initializeRequest(0), auth);
    await opened.body?.cancel();
    const session = opened.headers.get("mcp-session-id")!;
    assert.ok(session);
    const legacy = { ...auth, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" };
    const done = await post(String(server.url), {
      jsonrpc: "2.0",
      method: "notifications/initialized",
    }, legacy);
    await done.body?.cancel();
    const list = await post(String(server.url), {
      jsonrpc: "2.0",
      id: 6,
      method: "tools/list",
    }, legacy);
    assert.deepEqual(await names(list), ["whoami"]);
    const call = await post(String(server.url), {
      jsonrpc: "2.0",
      id: "seven",
      method: "tools/call",
      params: { name: "purge" },
    }, legacy);
    assert.equal(call.status, 403);
    assert.match(
      call.headers.get("www-authenticate") ?? "",
      /error="insufficient_scope", scope="mcp:admin"/,
    );
    assert.equal((await call.json()).id, "seven");
  } finally {
    await server.stop();
    await jwks.close();
  }
});

Deno.test("auth edges: --auth-scopes refuses a token lacking a global scope with 403 insufficient_scope naming them", async () => {
  const jwks = new JwksEndpoint();
  const server = await serveWithAuth(jwks, ["--auth-scopes", "mcp,mcp:write"]);
  try {
    const aud = String(server.url);
    const refused = await ping(server.url, 11, await sign({ sub: "ada", aud, scope: "mcp" }));
    assert.equal(refused.status, 403);
    assert.match(
      refused.headers.get("www-authenticate") ?? "",
      /error="insufficient_scope", scope="mcp mcp:write"/,
    );
    assert.equal((await refused.json()).id, 11);
    const allowed = await ping(
      server.url,
      12,
      await sign({ sub: "ada", aud, scope: "mcp:write mcp" }),
    );
    assert.equal(allowed.status, 200);
    await allowed.body?.cancel();
    // The metadata advertises them.
    const metadata = await fetch(new URL("/.well-known/oauth-protected-resource/mcp", server.url));
    assert.deepEqual((await metadata.json()).scopes_supported, ["mcp", "mcp:write"]);
  } finally {
    await server.stop();
    await jwks.close();
  }
});

Deno.test("auth edges: a resource or prompt needing a scope the token lacks is hidden from its list and refused with 403 insufficient_scope at read/get", async () => {
  const { jwks, server, plain, admin } = await serveScoped();
  try {
    const ask = (
      bearer: string,
      id: number,
      method: string,
      params: Record<string, unknown> = {},
      name?: string,
    ) => stateless(server.url, bearer, id, method, name, params);
    const uris = async (bearer: string) =>
      ((await (await ask(bearer, 1, "resources/list")).json()).result.resources as {
        uri: string;
      }[]).map((r) => r.uri);
    const prompts = async (bearer: string) =>
      ((await (await ask(bearer, 2, "prompts/list")).json()).result.prompts as {
        name: string;
      }[]).map((p) => p.name);
    assert.deepEqual(await uris(plain), ["public://news"]);
    assert.deepEqual(await uris(admin), ["public://news", "secret://plans"]);
    assert.deepEqual(await prompts(plain), []);
    assert.deepEqual(await prompts(admin), ["confess"]);

    const refusedRead = await ask(
      plain,
      3,
      "resources/read",
      { uri: "secret://plans" },
      "secret://plans",
    );
    assert.equal(refusedRead.status, 403);
    assert.match(
      refusedRead.headers.get("www-authenticate") ?? "",
      /error="insufficient_scope", scope="mcp:admin"/,
    );
    assert.equal((await refusedRead.json()).id, 3);
    const refusedGet = await ask(plain, 4, "prompts/get", { name: "confess" }, "confess");
    assert.equal(refusedGet.status, 403);
    assert.match(refusedGet.headers.get("www-authenticate") ?? "", /scope="mcp:admin"/);
    assert.equal((await refusedGet.json()).id, 4);

    const read = await ask(admin, 5, "resources/read", { uri: "secret://plans" }, "secret://plans");
    assert.equal((await read.json()).result.contents[0].text, "the plans");
    const got = await ask(admin, 6, "prompts/get", { name: "confess" }, "confess");
    assert.equal((await got.json()).result.messages[0].content.text, "confess");
  } finally {
    await server.stop();
    await jwks.close();
  }
});
