import assert from "node:assert/strict";
import { isLockedError, retryLocked } from "./kv_retry.ts";

Deno.test("isLockedError knows SQLite's lock and busy errors, and nothing else", () => {
  assert.ok(isLockedError(new TypeError("database is locked")));
  assert.ok(isLockedError(new Error("SQLITE_BUSY: database is busy")));
  assert.ok(isLockedError("database is locked"));
  assert.equal(isLockedError(new Error("value too large")), false);
});

Deno.test("retryLocked rethrows any other error at once", async () => {
  let calls = 0;
  await assert.rejects(
    retryLocked(() => {
      calls++;
      return Promise.reject(new RangeError("value too large"));
    }),
    RangeError,
  );
  assert.equal(calls, 1);
});

Deno.test("retryLocked fails closed with the lock error once its time is up", async () => {
  let calls = 0;
  const started = Date.now();
  await assert.rejects(
    retryLocked(() => {
      calls++;
      return Promise.reject(new TypeError("database is locked"));
    }, 30),
    /database is locked/,
  );
  assert.ok(calls > 1, "retried before giving up");
  assert.ok(Date.now() - started < 1_000);
});
