import assert from "node:assert/strict";
import { McpError } from "./errors.ts";
import { RequestStateCodec } from "./request_state.ts";

const payload = {
  method: "tools/call",
  target: "greet",
  argumentsDigest: "",
  answers: { name: { action: "accept" } },
  round: 1,
};

Deno.test("a sealed state opens with its payload", async () => {
  const codec = new RequestStateCodec();
  const state = await codec.seal(payload);
  assert.deepEqual(await codec.open(state, "tools/call", "greet"), payload);
});

Deno.test("tampered, foreign, misbound and expired states are -32602", async () => {
  const codec = new RequestStateCodec({ secret: "one secret that is long enough to use" });
  const state = await codec.seal(payload);
  const isInvalidParams = (e: unknown) => e instanceof McpError && e.code === -32602;
  await assert.rejects(codec.open(state + "-TAMPERED", "tools/call", "greet"), isInvalidParams);
  await assert.rejects(codec.open("not.a.state.at-all", "tools/call", "greet"), isInvalidParams);
  await assert.rejects(codec.open(state, "tools/call", "other"), isInvalidParams);
  const other = new RequestStateCodec({ secret: "another secret that is long enough" });
  await assert.rejects(other.open(state, "tools/call", "greet"), isInvalidParams);
  const expired = new RequestStateCodec({ secret: "s", ttlMs: -1 });
  await assert.rejects(
    expired.open(await expired.seal(payload), "tools/call", "greet"),
    isInvalidParams,
  );
});

Deno.test("a state opens only with the digest of the arguments it was sealed for", async () => {
  const codec = new RequestStateCodec();
  const digest = await RequestStateCodec.argumentsDigest({ id: "harmless", opts: { a: 1, b: 2 } });
  const state = await codec.seal({ ...payload, argumentsDigest: digest });
  const reordered = await RequestStateCodec.argumentsDigest({
    opts: { b: 2, a: 1 },
    id: "harmless",
  });
  assert.equal(reordered, digest);
  assert.equal((await codec.open(state, "tools/call", "greet", reordered)).round, 1);
  const other = await RequestStateCodec.argumentsDigest({ id: "precious", opts: { a: 1, b: 2 } });
  await assert.rejects(
    codec.open(state, "tools/call", "greet", other),
    (e) => e instanceof McpError && e.code === -32602 && /another request/.test(e.message),
  );
  await assert.rejects(codec.open(state, "tools/call", "greet"), McpError);
  assert.equal(
    await RequestStateCodec.argumentsDigest(undefined),
    await RequestStateCodec.argumentsDigest({}),
  );
  assert.notEqual(
    await RequestStateCodec.argumentsDigest({ a: [1, 2] }),
    await RequestStateCodec.argumentsDigest({ a: [2, 1] }),
  );
});

Deno.test("a rotation keeps states sealed with the previous secret open, until it is dropped", async () => {
  const [oldSecret, newSecret] = ["o".repeat(32), "n".repeat(32)];
  const before = new RequestStateCodec({ secret: oldSecret });
  const sealedBefore = await before.seal(payload);
  const after = new RequestStateCodec({ secret: newSecret, previousSecrets: [oldSecret] });
  assert.deepEqual(await after.open(sealedBefore, "tools/call", "greet"), payload);
  // The new secret signs: a codec that only knows the old one refuses.
  await assert.rejects(before.open(await after.seal(payload), "tools/call", "greet"), McpError);
  await after.useKeys({ secret: newSecret });
  await assert.rejects(after.open(sealedBefore, "tools/call", "greet"), McpError);
});

Deno.test("a state no known key opens reloads the keys, at most once a second", async () => {
  const signer = new RequestStateCodec({ secret: "r".repeat(32) });
  const state = await signer.seal(payload);
  const codec = new RequestStateCodec();
  assert.equal(codec.hasSecret, false);
  let reloads = 0;
  await codec.useKeys({ secret: "s".repeat(32) }, () => {
    reloads++;
    return Promise.resolve({ secret: "r".repeat(32) });
  });
  assert.equal(codec.hasSecret, true);
  assert.deepEqual(await codec.open(state, "tools/call", "greet"), payload);
  assert.equal(reloads, 1);
  const forged = await new RequestStateCodec().seal(payload);
  await assert.rejects(codec.open(forged, "tools/call", "greet"), McpError);
  await assert.rejects(codec.open(forged, "tools/call", "greet"), McpError);
  assert.equal(reloads, 1, "a forged state cannot make every request reload");
});

Deno.test("a state sealed for a principal opens for that principal only, refused like a forged one", async () => {
  const codec = new RequestStateCodec();
  const forAda = await codec.seal({ ...payload, principal: "ada" });
  assert.deepEqual(await codec.open(forAda, "tools/call", "greet", "", "ada"), {
    ...payload,
    principal: "ada",
  });
  for (const other of ["eve", undefined]) {
    await assert.rejects(
      codec.open(forAda, "tools/call", "greet", "", other),
      (error: McpError) =>
        error.code === -32602 && error.message === "requestState integrity check failed",
    );
  }
  // An anonymous caller's state does not open for an authenticated one.
  const anonymous = await codec.seal(payload);
  await assert.rejects(codec.open(anonymous, "tools/call", "greet", "", "ada"), McpError);
});
