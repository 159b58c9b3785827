import assert from "node:assert/strict";
import { KvRateLimitStore } from "./kv_rate_limit_store.ts";

Deno.test("kv rate limits: two handles on one file spend each token once, under concurrent takes", async () => {
  const dir = await Deno.makeTempDir({ prefix: "anubis-rate-" });
  const [one, two] = [await Deno.openKv(`${dir}/r.kv`), await Deno.openKv(`${dir}/r.kv`)];
  try {
    // A rate so slow nothing refills during the test: the burst is all there is.
    const limit = { perSecond: 0.001, burst: 10 };
    const stores = [new KvRateLimitStore(one), new KvRateLimitStore(two)];
    const waits = await Promise.all(
      Array.from({ length: 30 }, (_, i) => stores[i % 2].take("ada", limit)),
    );
    assert.equal(waits.filter((wait) => wait === 0).length, 10);
    assert.ok(waits.every((wait) => wait >= 0));
    assert.equal(await stores[0].take("eve", limit), 0, "another caller's bucket is full");
  } finally {
    one.close();
    two.close();
    await Deno.remove(dir, { recursive: true });
  }
});
