import assert from "node:assert/strict";
import { redisAvailable } from "../helpers/redis_server.ts";

Deno.test({
  name: "bench smoke: the Redis store benchmark runs every row",
  ignore: !redisAvailable,
  async fn() {
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--unstable-kv", "bench/redis_store_load.ts", "0.05"],
      cwd: new URL("../..", import.meta.url),
    }).output();
    assert.ok(output.success, new TextDecoder().decode(output.stderr));
    const names = new TextDecoder().decode(output.stdout).split("\n")
      .filter((line) => line.startsWith("BENCH ")).map((line) => JSON.parse(line.slice(6)).name);
    assert.equal(names.length, 9, names.join(", "));
    for (const store of ["session save+load", "task round trip", "rate-limit take"]) {
      assert.ok(names.includes(`${store}: Redis store`), names.join(", "));
      assert.ok(names.includes(`${store}: KV store`), names.join(", "));
    }
  },
});
