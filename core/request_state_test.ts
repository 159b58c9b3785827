import assert from "node:assert/strict";
import { McpError } from "./errors.ts";
import { RequestStateCodec } from "./request_state.ts";

const payload = {
  method: "tools/call",
  target: "greet",
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
