/**
 * The in-memory token buckets refill at the configured rate: over a simulated
 * clock, the admitted requests are the burst plus the rate times the time.
 */

import assert from "node:assert/strict";
import { TokenBuckets } from "./rate_limit.ts";

Deno.test("token buckets: the burst, then one request per 1/rate seconds", () => {
  const buckets = new TokenBuckets({ perSecond: 10, burst: 2 });
  assert.equal(buckets.take("ada", 0), 0);
  assert.equal(buckets.take("ada", 0), 0);
  assert.equal(buckets.take("ada", 0), 100, "the third waits one refill (100 ms at 10/s)");
  assert.equal(buckets.take("ada", 50), 50, "half a token refilled, 50 ms to go");
  assert.equal(buckets.take("ada", 100), 0, "a whole token after 100 ms");
  assert.equal(buckets.take("bob", 100), 0, "another caller has a bucket of its own");
});

Deno.test("token buckets: a caller asking every millisecond for 10 s is admitted at the rate", () => {
  const buckets = new TokenBuckets({ perSecond: 20, burst: 40 });
  let admitted = 0;
  for (let now = 0; now < 10_000; now++) {
    if (buckets.take("flood", now) === 0) admitted++;
  }
  // The burst at once, then 20 a second for the 10 s.
  assert.ok(admitted >= 40 + 199 && admitted <= 40 + 200, `admitted ${admitted}`);
});

Deno.test("token buckets: an idle caller's bucket refills to the burst, never beyond", () => {
  const buckets = new TokenBuckets({ perSecond: 1, burst: 3 });
  for (let i = 0; i < 3; i++) assert.equal(buckets.take("ada", 0), 0);
  assert.ok((buckets.take("ada", 0) as number) > 0);
  const after = [1, 2, 3, 4].map(() => buckets.take("ada", 3_600_000));
  assert.deepEqual(after.map((wait) => wait === 0), [true, true, true, false]);
});
