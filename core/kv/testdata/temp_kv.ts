// A KV file in a fresh temp dir, and how to close and remove it. Shared by the KV stores' tests: it
// sits beside the plumbing they share, so neither reaches into the other package (Deno only; core's
// code never imports it and testdata is not published).

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
