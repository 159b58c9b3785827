/**
 * Stateless multi round-trip input across `cli serve --http` processes: the
 * rounds of one request answered by different instances, with no secret
 * configured when they share a KV store, and with `--request-state-secret`
 * (or its environment variable) when they share nothing.
 */

import assert from "node:assert/strict";
import { startHttpServer } from "../helpers/everything_http_server.ts";
import { headers2026, post, request2026 } from "../helpers/http_helpers.ts";
import { startInstance } from "../helpers/instances_process.ts";

const TOOL = "test_input_required_result_multi_round";
const CAPABILITIES = { "io.modelcontextprotocol/clientCapabilities": { elicitation: {} } };

type Result = {
  resultType?: string;
  requestState?: string;
  inputRequests?: Record<string, unknown>;
  content?: { text: string }[];
};

/** One round of the tool's call at `url`. */
async function round(
  url: string,
  id: number,
  extra: Record<string, unknown> = {},
): Promise<{ result?: Result; error?: { code: number; message: string } }> {
  const body = request2026(id, "tools/call", { name: TOOL, arguments: {}, ...extra }, CAPABILITIES);
  const response = await post(url, body, headers2026("tools/call", TOOL));
  assert.equal(response.status, 200);
  return await response.json();
}

/** Asks at `urls[0]`, answers the name at `urls[1]` and the colour at `urls[2]`. */
async function threeRounds(urls: [string, string, string]): Promise<string> {
  const first = (await round(urls[0], 1)).result!;
  assert.equal(first.resultType, "input_required");
  assert.deepEqual(Object.keys(first.inputRequests!), ["name"]);
  const second = await round(urls[1], 2, {
    requestState: first.requestState,
    inputResponses: { name: { action: "accept", content: { name: "Ada" } } },
  });
  assert.equal(second.error, undefined, JSON.stringify(second.error));
  assert.deepEqual(Object.keys(second.result!.inputRequests!), ["color"]);
  const third = await round(urls[2], 3, {
    requestState: second.result!.requestState,
    inputResponses: { color: { action: "accept", content: { color: "teal" } } },
  });
  assert.equal(third.error, undefined, JSON.stringify(third.error));
  return third.result!.content![0].text;
}

Deno.test("instances: rounds answered by A, B and A again on one KV, nothing configured", async () => {
  const dir = await Deno.makeTempDir({ prefix: "anubis-rounds-" });
  const kvPath = `${dir}/a.kv`;
  // Started at once: both race to create the shared key, and agree on one.
  const [a, b] = await Promise.all([startInstance(kvPath), startInstance(kvPath)]);
  try {
    assert.equal(await threeRounds([a.url, b.url, a.url]), "Ada likes teal");
    assert.equal(await threeRounds([b.url, a.url, b.url]), "Ada likes teal");
  } finally {
    await a.stop();
    await b.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("instances: with no store, --request-state-secret (or its env var) is what they share", async () => {
  const secret = "a secret the operator gave all instances";
  const a = await startHttpServer(["--request-state-secret", secret]);
  const b = await startHttpServer([], { ANUBIS_REQUEST_STATE_SECRET: secret });
  const stranger = await startHttpServer();
  try {
    assert.equal(await threeRounds([a.url.href, b.url.href, a.url.href]), "Ada likes teal");
    // An instance with its own random key refuses the others' state.
    const first = (await round(a.url.href, 1)).result!;
    const refused = await round(stranger.url.href, 2, {
      requestState: first.requestState,
      inputResponses: { name: { action: "accept", content: { name: "Ada" } } },
    });
    assert.equal(refused.error?.code, -32602);
    assert.match(refused.error!.message, /integrity check failed/);
  } finally {
    await a.stop();
    await b.stop();
    await stranger.stop();
  }
});

Deno.test("instances: a rotation by the operator keeps the rounds in flight", async () => {
  const [oldSecret, newSecret] = [
    "the secret before the rotation...",
    "the secret after the rotation....",
  ];
  const before = await startHttpServer(["--request-state-secret", oldSecret]);
  const after = await startHttpServer([
    "--request-state-secret",
    newSecret,
    "--request-state-previous-secret",
    oldSecret,
  ]);
  try {
    assert.equal(
      await threeRounds([before.url.href, after.url.href, after.url.href]),
      "Ada likes teal",
    );
  } finally {
    await before.stop();
    await after.stop();
  }
});

Deno.test("cli: a short secret is refused before serving", async () => {
  await assert.rejects(
    startHttpServer(["--request-state-secret", "short"]),
    /--request-state-secret must be at least 32 characters/,
  );
  await assert.rejects(
    startHttpServer([], { ANUBIS_REQUEST_STATE_SECRET: "short" }),
    /ANUBIS_REQUEST_STATE_SECRET must be at least 32 characters/,
  );
});
