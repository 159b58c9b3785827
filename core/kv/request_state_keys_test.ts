import assert from "node:assert/strict";
import { McpError } from "../errors.ts";
import { RequestStateCodec } from "../request_state.ts";
import { PREVIOUS_SECRET_WINDOW_MS, SharedRequestStateKeys } from "./request_state_keys.ts";

const payload = { method: "tools/call", target: "t", answers: {}, round: 1 };

Deno.test("shared keys: many first loads at once agree on one secret, written once", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const all = await Promise.all(
      Array.from({ length: 8 }, () => new SharedRequestStateKeys(kv).load()),
    );
    for (const keys of all) assert.deepEqual(keys.secret, all[0].secret);
    assert.deepEqual(all[0].previousSecrets, []);
  } finally {
    kv.close();
  }
});

Deno.test("shared keys: a stale secret is rotated once; the old one opens states for the window", async () => {
  const kv = await Deno.openKv(":memory:");
  let now = 1_000_000;
  const options = { rotateAfterMs: 60_000, now: () => now };
  try {
    const [a, b] = [new RequestStateCodec(), new RequestStateCodec()];
    const keysA = new SharedRequestStateKeys(kv, options);
    const keysB = new SharedRequestStateKeys(kv, options);
    const stopA = await keysA.attach(a, 3_600_000);
    const stopB = await keysB.attach(b, 3_600_000);
    const early = await a.seal(payload);

    now += 61_000; // stale: the next load rotates, and both agree on the new secret
    const [rotatedA, rotatedB] = await Promise.all([keysA.load(), keysB.load()]);
    assert.deepEqual(rotatedA, rotatedB);
    assert.equal(rotatedA.previousSecrets!.length, 1);
    await a.useKeys(rotatedA);
    // B has not refreshed: a state A signs with the new secret makes B reload.
    assert.equal((await b.open(await a.seal(payload), "tools/call", "t")).round, 1);
    assert.equal((await a.open(early, "tools/call", "t")).round, 1, "in flight before rotation");

    now += PREVIOUS_SECRET_WINDOW_MS; // the window is over: the old secret is dropped
    await a.useKeys(await keysA.load());
    await assert.rejects(a.open(early, "tools/call", "t"), McpError);
    stopA();
    stopB();
  } finally {
    kv.close();
  }
});

Deno.test("shared keys: an unreadable record is replaced, never trusted", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    await kv.set(["anubis", "request-state", "keys"], new TextEncoder().encode("not json"));
    const keys = await new SharedRequestStateKeys(kv).load();
    assert.equal((keys.secret as Uint8Array).length, 32);
    assert.deepEqual(await new SharedRequestStateKeys(kv).load(), keys);
  } finally {
    kv.close();
  }
});
