// A KV file in a fresh temp dir, and how to close and remove it. Shared by the KV stores' tests.

/** Opens `name` in a new temp dir; `close` closes the database and removes the dir. */
export async function tempKv(name = "test.kv"): Promise<{
  kv: Deno.Kv;
  path: string;
  close: () => Promise<void>;
}> {
  const dir = await Deno.makeTempDir({ prefix: "anubis_kv_" });
  const path = `${dir}/${name}`;
  const kv = await Deno.openKv(path);
  return {
    kv,
    path,
    close: async () => {
      kv.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}
