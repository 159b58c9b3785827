import type { Kv as NodeKv } from "@deno/kv";
import type { KvLike } from "../../core/kv/kv_like.ts";

Deno.test("a Deno.Kv fits KvLike", async () => {
  const kv = await Deno.openKv(":memory:");
  const like: KvLike = kv;
  like.close();
});

// What Node passes (`openKv` of npm:@deno/kv) must fit too; `deno check` fails if it stops.
const _nodeKvFits = (kv: NodeKv): KvLike => kv;
