import { taskStoreContract } from "@anubis/core/testing";
import { KvTaskStore } from "./mod.ts";

// The contract on a real KV file in a temp dir, one database per case.
for (
  const c of taskStoreContract(async () => {
    const dir = await Deno.makeTempDir();
    const kv = await Deno.openKv(`${dir}/tasks.kv`);
    return {
      store: new KvTaskStore(kv),
      close: async () => {
        kv.close();
        await Deno.remove(dir, { recursive: true });
      },
    };
  })
) Deno.test(`kv ${c.name}`, c.fn);
