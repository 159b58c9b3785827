/**
 * Auth across `cli serve --http --auth-*` instances on one KV file, as behind
 * a load balancer (one `--auth-audience` for all): a legacy session stays
 * bound to the principal that opened it on whichever instance restores it,
 * a stateless `requestState` opens only for the principal it was sealed
 * for, at any instance, and `--rate-limit` is one limit per principal across
 * the instances (the buckets live in the KV file).
 * Tokens are real JWTs signed by `jose`, checked against a real JWKS
 * endpoint on loopback.
 */

import assert from "node:assert/strict";
import * as jose from "jose";
import { headers2026, initializeRequest, post, request2026 } from "../helpers/http_helpers.ts";
import { type Instance, startInstance } from "../helpers/instances_process.ts";

const ISSUER = "https://issuer.test";
const AUDIENCE = "https://mcp.test/mcp";
const { publicKey, privateKey } = await jose.generateKeyPair("ES256", { extractable: true });
const jwk = { ...(await jose.exportJWK(publicKey)), kid: "k1", alg: "ES256", use: "sig" };
const jwks = Deno.serve(
  { hostname: "127.0.0.1", port: 0, onListen() {} },
  () => Response.json({ keys: [jwk] }),
);
const AUTH_FLAGS = [
  "--auth-issuer",
  ISSUER,
  "--auth-jwks",
  `http://127.0.0.1:${jwks.addr.port}/jwks`,
  "--auth-audience",
  AUDIENCE,
];

/** A bearer token for `subject`, valid for ten minutes. */
function tokenFor(subject: string): Promise<string> {
  return new jose.SignJWT({ scope: "mcp" })
    .setProtectedHeader({ alg: "ES256", kid: "k1" })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setSubject(subject)
    .setIssuedAt()
    .setExpirationTime("10m")
    .sign(privateKey);
}

/** Runs `body` with `count` authenticated instances on one fresh KV file. */
async function withInstances(
  count: number,
  body: (instances: Instance[]) => Promise<void>,
  flags: string[] = [],
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "anubis-auth-instances-" });
  const instances: Instance[] = [];
  try {
    for (let i = 0; i < count; i++) {
      instances.push(await startInstance(`${dir}/a.kv`, "both", [...AUTH_FLAGS, ...flags]));
    }
    await body(instances);
  } finally {
    for (const instance of instances) await instance.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

/** A legacy POST on a session as `bearer`: its status and JSON-RPC answer (JSON or one SSE event). */
async function onSession(
  url: string,
  session: string,
  bearer: string,
  message: Record<string, unknown>,
): Promise<{ status: number; body?: Record<string, unknown> & { error?: { code: number } } }> {
  const response = await post(url, message, {
    authorization: `Bearer ${bearer}`,
    "mcp-session-id": session,
    "mcp-protocol-version": "2025-11-25",
  });
  const text = await response.text();
  if (text === "") return { status: response.status };
  return {
    status: response.status,
    body: JSON.parse(text.startsWith("{") ? text : text.split("data: ")[1]),
  };
}

const PING = { jsonrpc: "2.0", id: 2, method: "ping" };

Deno.test("instances auth: a session restored on another instance stays bound to its principal", async () => {
  await withInstances(2, async ([a, b]) => {
    const [ada, eve] = await Promise.all([tokenFor("ada"), tokenFor("eve")]);
    const init = await post(a.url, initializeRequest(1), { authorization: `Bearer ${ada}` });
    await init.body?.cancel();
    assert.equal(init.status, 200);
    const session = init.headers.get("mcp-session-id")!;
    const initialized = { jsonrpc: "2.0", method: "notifications/initialized" };
    assert.equal((await onSession(a.url, session, ada, initialized)).status, 202);

    // Eve first, at the instance that never saw the session: not restored for her.
    const stranger = await onSession(b.url, session, eve, PING);
    assert.equal(stranger.status, 404);
    assert.equal(stranger.body?.error?.code, -32001);
    const stream = await fetch(b.url, {
      headers: {
        accept: "text/event-stream",
        authorization: `Bearer ${eve}`,
        "mcp-session-id": session,
      },
    });
    await stream.body?.cancel();
    assert.equal(stream.status, 404);

    // Ada at B: restored from the store, bound to her there too.
    const owner = await onSession(b.url, session, ada, PING);
    assert.equal(owner.status, 200, JSON.stringify(owner.body));
    assert.deepEqual(owner.body?.result, {});
    const live = await onSession(b.url, session, eve, PING);
    assert.equal(live.status, 404);
    assert.equal(live.body?.error?.code, -32001);
    const end = await fetch(b.url, {
      method: "DELETE",
      headers: { authorization: `Bearer ${eve}`, "mcp-session-id": session },
    });
    await end.body?.cancel();
    assert.equal(end.status, 404);
    // Still Ada's, at both.
    assert.equal((await onSession(a.url, session, ada, PING)).status, 200);
    assert.equal((await onSession(b.url, session, ada, PING)).status, 200);
  });
});

const TOOL = "test_input_required_result_multi_round";
const ELICITATION = { "io.modelcontextprotocol/clientCapabilities": { elicitation: {} } };

/** One stateless round of the multi-round tool at `url` as `bearer`. */
async function round(
  url: string,
  bearer: string,
  id: number,
  extra: Record<string, unknown> = {},
): Promise<
  {
    result?: { requestState?: string; resultType?: string };
    error?: { code: number; message: string };
  }
> {
  const body = request2026(id, "tools/call", { name: TOOL, arguments: {}, ...extra }, ELICITATION);
  const response = await post(url, body, {
    ...headers2026("tools/call", TOOL),
    authorization: `Bearer ${bearer}`,
  });
  assert.equal(response.status, 200);
  return await response.json();
}

Deno.test("instances auth: a requestState opens for the principal it was sealed for, and no other", async () => {
  await withInstances(2, async ([a, b]) => {
    const [ada, eve] = await Promise.all([tokenFor("ada"), tokenFor("eve")]);
    const first = (await round(a.url, ada, 1)).result!;
    assert.equal(first.resultType, "input_required");
    const answer = {
      requestState: first.requestState,
      inputResponses: { name: { action: "accept", content: { name: "Ada" } } },
    };
    // Eve replays Ada's state, at either instance: refused as a tampered state.
    for (const url of [b.url, a.url]) {
      const stolen = await round(url, eve, 2, answer);
      assert.equal(stolen.error?.code, -32602);
      assert.match(stolen.error!.message, /integrity check failed/);
    }
    // Ada's own round 2, at the other instance, goes on.
    const second = await round(b.url, ada, 2, answer);
    assert.equal(second.error, undefined, JSON.stringify(second.error));
    assert.equal(second.result?.resultType, "input_required");
  });
});

Deno.test("instances auth: --rate-limit is one bucket per principal across instances, shared through KV", async () => {
  // 0.1/s: one token every 10 s, so the test's own pace refills nothing.
  await withInstances(2, async ([a, b]) => {
    const [ada, eve] = await Promise.all([tokenFor("ada"), tokenFor("eve")]);
    const ping = (url: string, bearer: string) =>
      post(url, request2026(1, "tools/list"), {
        ...headers2026("tools/list"),
        authorization: `Bearer ${bearer}`,
      });
    // The burst of 4, spread over both instances (in memory each would allow 4).
    for (const url of [a.url, b.url, a.url, b.url]) {
      const allowed = await ping(url, ada);
      await allowed.body?.cancel();
      assert.equal(allowed.status, 200);
    }
    for (const url of [a.url, b.url]) {
      const limited = await ping(url, ada);
      assert.equal(limited.status, 429);
      const retryAfter = Number(limited.headers.get("retry-after"));
      assert.ok(retryAfter >= 1 && retryAfter <= 10, `Retry-After ${retryAfter}`);
      const body = await limited.json();
      assert.equal(body.jsonrpc, "2.0");
      assert.equal(body.id, 1, "the id of the refused request");
      assert.equal(body.error.code, -32000);
      assert.match(body.error.message, /rate limit/);
      assert.ok(body.error.data.retryAfterMs > 0);
    }
    // Another principal has its own bucket.
    const other = await ping(b.url, eve);
    await other.body?.cancel();
    assert.equal(other.status, 200);
  }, ["--rate-limit", "0.1/s", "--rate-limit-burst", "4"]);
});

Deno.test("instances auth: cleanup", async () => {
  await jwks.shutdown();
});
