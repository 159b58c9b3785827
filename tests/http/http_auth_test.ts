/**
 * OAuth resource-server auth over real HTTP on loopback, with real JWTs
 * (signed by `jose`) and a real JWKS endpoint: RFC 9728 metadata, the
 * caller reaching `frame.auth` in both eras, and every refusal
 * the spec names — no token, expired, not yet valid, wrong issuer, wrong
 * audience, bad signature, `alg: none`, unknown `kid`, missing scope, token
 * in the query — each with its status and `WWW-Authenticate`.
 */

import assert from "node:assert/strict";
import * as jose from "jose";
import { defineServer } from "@anubis/core";
import { type AuthOptions, introspectionVerifier, jwtVerifier } from "@anubis/transport-http";
import {
  headers2026,
  initializeRequest,
  post,
  request2026,
  start,
  type TestServer,
} from "../helpers/http_helpers.ts";

const ISSUER = "https://issuer.test";
const { publicKey, privateKey } = await jose.generateKeyPair("RS256", { extractable: true });
const other = await jose.generateKeyPair("RS256", { extractable: true });
const jwk = { ...(await jose.exportJWK(publicKey)), kid: "k1", alg: "RS256", use: "sig" };

let jwksFetches = 0;
const jwks = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => {
  jwksFetches++;
  return Response.json({ keys: [jwk] });
});
const JWKS_URL = `http://127.0.0.1:${jwks.addr.port}/jwks`;

const server = defineServer({
  name: "auth-test",
  version: "1.0.0",
  tools: [{
    name: "whoami",
    handler: (_args, frame) => {
      // frame.auth is the request context's authInfo, typed.
      if (frame.auth !== frame.context.authInfo) throw new Error("frame.auth is not authInfo");
      return frame.auth ? `${frame.auth.subject} ${frame.auth.scopes.join(",")}` : "anonymous";
    },
  }, {
    name: "admin_only",
    requiredScopes: ["mcp:admin"],
    handler: () => "admin",
  }],
});

function startAuth(auth: Partial<AuthOptions> = {}): TestServer {
  return start({
    auth: {
      verifyToken: jwtVerifier({ issuer: ISSUER, jwksUrl: JWKS_URL, jwksCooldownMs: 60_000 }),
      authorizationServers: [ISSUER],
      scopesSupported: ["mcp:tools"],
      ...auth,
    },
  }, server);
}

interface Claims {
  iss?: string;
  aud?: string;
  sub?: string;
  scope?: string;
  exp?: number;
  nbf?: number;
}

const now = () => Math.floor(Date.now() / 1000);

async function token(
  audience: string,
  claims: Claims = {},
  key: CryptoKey = privateKey,
  kid = "k1",
): Promise<string> {
  return await new jose.SignJWT({ scope: "mcp:tools", ...claims })
    .setProtectedHeader({ alg: "RS256", kid })
    .setIssuer(claims.iss ?? ISSUER)
    .setAudience(claims.aud ?? audience)
    .setSubject(claims.sub ?? "ada")
    .setIssuedAt()
    .setExpirationTime(claims.exp ?? now() + 600)
    .setNotBefore(claims.nbf ?? now() - 10)
    .sign(key);
}

function callWhoami(url: string, bearer?: string): Promise<Response> {
  return post(url, request2026(1, "tools/call", { name: "whoami", arguments: {} }), {
    ...headers2026("tools/call", "whoami"),
    ...(bearer === undefined ? {} : { authorization: `Bearer ${bearer}` }),
  });
}

/** A legacy POST's answer, sent as JSON or as one SSE event. */
async function answerOf(
  response: Response,
): Promise<{ text: string; body: ReturnType<typeof JSON.parse> }> {
  const text = await response.text();
  return { text, body: JSON.parse(text.startsWith("{") ? text : text.split("data: ")[1]) };
}

/** `whoami` in the stateless era: the tool's text. */
async function whoamiStateless(url: string, bearer?: string): Promise<string> {
  const response = await callWhoami(url, bearer);
  const body = await response.json();
  assert.equal(response.status, 200, JSON.stringify(body));
  return body.result.content[0].text;
}

/** `whoami` in a fresh legacy (2025-11-25) session: the tool's text. */
async function whoamiLegacy(url: string, bearer?: string): Promise<string> {
  const auth: Record<string, string> = bearer ? { authorization: `Bearer ${bearer}` } : {};
  const init = await post(url, initializeRequest(1), auth);
  await init.body?.cancel();
  assert.equal(init.status, 200);
  const headers = { ...auth, "mcp-session-id": init.headers.get("mcp-session-id")! };
  const initialized = { jsonrpc: "2.0", method: "notifications/initialized" };
  await (await post(url, initialized, headers)).body?.cancel();
  const legacy = await post(url, {
    jsonrpc: "2.0",
    id: 2,
    method: "tools/call",
    params: { name: "whoami", arguments: {} },
  }, { ...headers, "mcp-protocol-version": "2025-11-25" });
  return (await answerOf(legacy)).body.result.content[0].text;
}

async function refused(response: Response, status: number, error?: string): Promise<string> {
  const body = await response.json();
  assert.equal(response.status, status, JSON.stringify(body));
  assert.equal(body.jsonrpc, "2.0");
  assert.ok(body.error, "a JSON-RPC error body");
  const challenge = response.headers.get("www-authenticate") ?? "";
  assert.match(
    challenge,
    /^Bearer resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp"/,
  );
  if (error === undefined) assert.doesNotMatch(challenge, /error=/);
  else assert.match(challenge, new RegExp(`error="${error}"`));
  return challenge;
}

Deno.test("auth: metadata at both well-known paths; a valid token reaches the tool in both eras", async () => {
  const s = startAuth();
  try {
    const origin = new URL(s.url).origin;
    for (
      const path of [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
      ]
    ) {
      const response = await fetch(origin + path);
      const metadata = await response.json();
      assert.equal(response.status, 200);
      assert.deepEqual(metadata, {
        resource: s.url,
        authorization_servers: [ISSUER],
        scopes_supported: ["mcp:tools"],
        bearer_methods_supported: ["header"],
      });
    }
    const good = await token(s.url);
    assert.equal(await whoamiStateless(s.url, good), "ada mcp:tools");
    assert.equal(await whoamiLegacy(s.url, good), "ada mcp:tools");
  } finally {
    await s.close();
  }
});

Deno.test("auth: without auth, frame.auth is undefined in both eras", async () => {
  const s = start({}, server);
  try {
    assert.equal(await whoamiStateless(s.url), "anonymous");
    assert.equal(await whoamiLegacy(s.url), "anonymous");
  } finally {
    await s.close();
  }
});

Deno.test("auth: each refusal has its status and WWW-Authenticate, and the server keeps serving", async () => {
  const s = startAuth();
  try {
    await refused(await callWhoami(s.url), 401);
    const cases: [string, Promise<string>][] = [
      ["expired", token(s.url, { exp: now() - 120, nbf: now() - 600 })],
      ["not yet valid", token(s.url, { nbf: now() + 600 })],
      ["wrong issuer", token(s.url, { iss: "https://evil.test" })],
      ["wrong audience", token(s.url, { aud: "https://other-resource.test/mcp" })],
      ["bad signature", token(s.url, {}, other.privateKey)],
      ["malformed", Promise.resolve("not.a.jwt")],
    ];
    for (const [name, pending] of cases) {
      const challenge = await refused(await callWhoami(s.url, await pending), 401, "invalid_token");
      assert.ok(!challenge.includes(await pending), `${name}: the token is not echoed`);
    }
    // alg: none, with a payload that would otherwise pass.
    const header = jose.base64url.encode(JSON.stringify({ alg: "none", typ: "JWT" }));
    const payload = jose.base64url.encode(JSON.stringify({
      iss: ISSUER,
      aud: s.url,
      sub: "ada",
      scope: "mcp:tools",
      exp: now() + 600,
    }));
    await refused(await callWhoami(s.url, `${header}.${payload}.`), 401, "invalid_token");
    // Unknown kid: the JWKS is fetched again (once, within the cooldown), still no key.
    const before = jwksFetches;
    const stranger = await token(s.url, {}, other.privateKey, "k2");
    await refused(await callWhoami(s.url, stranger), 401, "invalid_token");
    await refused(await callWhoami(s.url, stranger), 401, "invalid_token");
    assert.ok(jwksFetches - before <= 1, `JWKS fetched ${jwksFetches - before} times`);
    // Token in the query string.
    const good = await token(s.url);
    const query = await callWhoami(`${s.url}?access_token=${good}`, good);
    await refused(query, 400, "invalid_request");
    // Still serving.
    const ok = await callWhoami(s.url, good);
    await ok.body?.cancel();
    assert.equal(ok.status, 200);
  } finally {
    await s.close();
  }
});

Deno.test("auth: static keys verify without a JWKS; exp and nbf within the clock skew pass, beyond it fail", async () => {
  const s = startAuth({ verifyToken: jwtVerifier({ issuer: ISSUER, keys: [jwk] }) });
  const before = jwksFetches;
  try {
    assert.equal(await whoamiStateless(s.url, await token(s.url)), "ada mcp:tools");
    // The default skew is 30 s: 10 s past exp or 10 s before nbf still passes.
    const late = await token(s.url, { exp: now() - 10, nbf: now() - 600 });
    assert.equal(await whoamiStateless(s.url, late), "ada mcp:tools");
    const early = await token(s.url, { nbf: now() + 10 });
    assert.equal(await whoamiStateless(s.url, early), "ada mcp:tools");
    // 120 s beyond either is refused, and so is a key that is not among the static ones.
    await refused(
      await callWhoami(s.url, await token(s.url, { exp: now() - 120, nbf: now() - 600 })),
      401,
      "invalid_token",
    );
    await refused(
      await callWhoami(s.url, await token(s.url, { nbf: now() + 120 })),
      401,
      "invalid_token",
    );
    const stranger = await token(s.url, {}, other.privateKey, "k2");
    await refused(await callWhoami(s.url, stranger), 401, "invalid_token");
    assert.equal(jwksFetches, before, "static keys fetch no JWKS");
  } finally {
    await s.close();
  }
});

Deno.test("auth: a missing required scope is 403 insufficient_scope naming the scope", async () => {
  const s = startAuth({ requiredScopes: ["mcp:admin"] });
  try {
    const challenge = await refused(
      await callWhoami(s.url, await token(s.url)),
      403,
      "insufficient_scope",
    );
    assert.match(challenge, /scope="mcp:admin"/);
    const admin = await callWhoami(s.url, await token(s.url, { scope: "mcp:tools mcp:admin" }));
    await admin.body?.cancel();
    assert.equal(admin.status, 200);
  } finally {
    await s.close();
  }
});

Deno.test("auth: a legacy session is bound to the principal that opened it", async () => {
  const s = startAuth();
  try {
    const ada = await token(s.url);
    const eve = await token(s.url, { sub: "eve" });
    const init = await post(s.url, initializeRequest(1), { authorization: `Bearer ${ada}` });
    await init.body?.cancel();
    const session = init.headers.get("mcp-session-id")!;
    const as = (bearer: string) => ({
      authorization: `Bearer ${bearer}`,
      "mcp-session-id": session,
    });
    const initialized = { jsonrpc: "2.0", method: "notifications/initialized" };
    const hijack = await post(s.url, initialized, as(eve));
    await hijack.body?.cancel();
    assert.equal(hijack.status, 404);
    const resume = await fetch(s.url, { headers: { accept: "text/event-stream", ...as(eve) } });
    await resume.body?.cancel();
    assert.equal(resume.status, 404);
    const end = await fetch(s.url, { method: "DELETE", headers: as(eve) });
    await end.body?.cancel();
    assert.equal(end.status, 404);
    const owner = await post(s.url, initialized, as(ada));
    await owner.body?.cancel();
    assert.equal(owner.status, 202);
  } finally {
    await s.close();
  }
});

Deno.test("auth: the RFC 7662 introspection verifier accepts active tokens for this resource only", async () => {
  const seen: string[] = [];
  const introspect = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (request) => {
      seen.push(request.headers.get("authorization") ?? "");
      const form = new URLSearchParams(await request.text());
      const token = form.get("token");
      if (token === "good") {
        return Response.json({
          active: true,
          sub: "ada",
          scope: "mcp:tools",
          aud: s.url,
          exp: now() + 600,
        });
      }
      if (token === "elsewhere") {
        return Response.json({
          active: true,
          sub: "ada",
          aud: "https://x.test",
        });
      }
      return Response.json({ active: false });
    },
  );
  const s = startAuth({
    verifyToken: introspectionVerifier({
      endpoint: `http://127.0.0.1:${introspect.addr.port}/introspect`,
      clientId: "rs",
      clientSecret: "pw",
    }),
  });
  try {
    const ok = await callWhoami(s.url, "good");
    assert.equal((await ok.json()).result.content[0].text, "ada mcp:tools");
    await refused(await callWhoami(s.url, "revoked"), 401, "invalid_token");
    await refused(await callWhoami(s.url, "elsewhere"), 401, "invalid_token");
    assert.equal(seen[0], `Basic ${btoa("rs:pw")}`);
  } finally {
    await s.close();
    await introspect.shutdown();
  }
});

Deno.test("auth: a tool's required scopes hide it from tools/list and refuse its call with 403 (step-up), in both eras", async () => {
  const s = startAuth();
  try {
    const names = async (bearer: string) => {
      const response = await post(s.url, request2026(1, "tools/list"), {
        ...headers2026("tools/list"),
        authorization: `Bearer ${bearer}`,
      });
      return (await response.json()).result.tools.map((t: { name: string }) => t.name);
    };
    const user = await token(s.url);
    const admin = await token(s.url, { scope: "mcp:tools mcp:admin" });
    assert.deepEqual(await names(user), ["whoami"]);
    assert.deepEqual(await names(admin), ["whoami", "admin_only"]);
    const call = (bearer: string) =>
      post(s.url, request2026(2, "tools/call", { name: "admin_only", arguments: {} }), {
        ...headers2026("tools/call", "admin_only"),
        authorization: `Bearer ${bearer}`,
      });
    const refused = await call(user);
    assert.equal(refused.status, 403);
    const denied = await refused.json();
    assert.equal(denied.error.code, -32600);
    assert.deepEqual(denied.error.data.scopes, ["mcp:admin"]);
    assert.equal((await (await call(admin)).json()).result.content[0].text, "admin");
    // Legacy era: the session's caller has no mcp:admin.
    const init = await post(s.url, initializeRequest(1), { authorization: `Bearer ${user}` });
    await init.body?.cancel();
    const legacyHeaders = {
      authorization: `Bearer ${user}`,
      "mcp-session-id": init.headers.get("mcp-session-id")!,
      "mcp-protocol-version": "2025-11-25",
    };
    await (await post(
      s.url,
      { jsonrpc: "2.0", method: "notifications/initialized" },
      legacyHeaders,
    ))
      .body?.cancel();
    const legacy = await post(s.url, {
      jsonrpc: "2.0",
      id: 3,
      method: "tools/call",
      params: { name: "admin_only", arguments: {} },
    }, legacyHeaders);
    assert.equal(legacy.status, 403);
    const { text, body } = await answerOf(legacy);
    assert.equal(body.error.code, -32600, text);
  } finally {
    await s.close();
  }
});

Deno.test("auth: cleanup", async () => {
  await jwks.shutdown();
});
