// Node 20 and Deno share one KV file through the two KV stores: Node runs the
// stores bundled with `deno bundle` and opens the file with npm:@deno/kv,
// installed by this test into a temp dir.
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import type { SessionRecord } from "@anubis/core";
import { KvEventStore } from "@anubis/event-store-kv";
import { KvSessionStore } from "@anubis/session-kv";

const DENO_KV_NPM = "@deno/kv@0.14.0";
const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

async function run(command: string, args: string[], cwd: string): Promise<string> {
  const output = await new Deno.Command(command, { args, cwd, stdout: "piped", stderr: "piped" })
    .output();
  const text = new TextDecoder();
  assert.equal(
    output.code,
    0,
    `${command} ${args.join(" ")}\n${text.decode(output.stdout)}\n${text.decode(output.stderr)}`,
  );
  return text.decode(output.stdout);
}

/** A temp dir with @deno/kv installed, the bundled stores and the Node script. */
async function nodeSide(): Promise<{ dir: string; node: (step: string) => Promise<unknown> }> {
  const dir = await Deno.makeTempDir({ prefix: "anubis_node_kv_" });
  await Deno.writeTextFile(`${dir}/package.json`, '{ "type": "module", "private": true }\n');
  await run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", DENO_KV_NPM], dir);
  for (const [entry, out] of [["event-store-kv", "event_store_kv"], ["session-kv", "session_kv"]]) {
    await run(Deno.execPath(), [
      "bundle",
      "--quiet",
      "--platform",
      "node",
      "-o",
      `${dir}/${out}.js`,
      here(`../../${entry}/mod.ts`),
    ], here("../.."));
  }
  await Deno.copyFile(here("./node_kv_interop.mjs"), `${dir}/interop.mjs`);
  return {
    dir,
    node: async (step) =>
      JSON.parse(await run("node", ["interop.mjs", dir, `${dir}/shared.kv`, step], dir)),
  };
}

const denoSession: SessionRecord = {
  v: 1,
  id: "deno-session",
  protocolVersion: "2025-11-25",
  clientInfo: { name: "deno-client", version: "1.0.0" },
  clientCapabilities: { sampling: {}, elicitation: {} },
  initialized: true,
  logLevel: "debug",
  subscriptions: ["file:///x"],
  assigns: { userId: 7, tags: ["a", "ü"] },
  updatedAt: 1,
};

Deno.test("Deno and Node 20 (@deno/kv) share events and sessions in one KV file", async () => {
  const { dir, node } = await nodeSide();
  const open = () => Deno.openKv(`${dir}/shared.kv`);
  try {
    const denoEvents = ["deno 1", "🎉".repeat(30_000), "deno 3"];
    let kv = await open();
    try {
      const events = new KvEventStore(kv);
      for (const data of denoEvents) await events.append("from-deno", data);
      await new KvSessionStore(kv).save(denoSession, 60_000);
    } finally {
      kv.close();
    }

    assert.deepEqual(await node("read"), {
      events: denoEvents.map((data, i) => ({ id: i + 1, data })),
      latestId: 3,
      session: denoSession,
    }, "Node reads what Deno wrote");

    assert.deepEqual(await node("write"), { ids: [1, 2, 3] });
    kv = await open();
    try {
      assert.deepEqual(await new KvEventStore(kv).replay("from-node", 1), [
        { id: 2, data: "ü".repeat(70_000) },
        { id: 3, data: "node 3" },
      ], "Deno reads what Node wrote");
      const nodeCounter = (await kv.get(["anubis", "events", "from-node", "id"])).value;
      assert.ok(nodeCounter instanceof Deno.KvU64, "Node writes the counter as a KvU64 too");
      assert.equal(nodeCounter.value, 3n);
      const sessions = new KvSessionStore(kv);
      const nodeSession = await sessions.load("node-session");
      assert.equal(nodeSession?.protocolVersion, "2025-03-26");
      assert.deepEqual(nodeSession?.assigns, { runtime: "node", big: "n".repeat(80_000) });
      assert.deepEqual(await sessions.load("deno-session"), denoSession, "touched by Node");

      // Deno keeps appending until Node is done, so the two really contend.
      let nodeDone = false;
      const fromNode = node("contend").finally(() => nodeDone = true);
      const events = new KvEventStore(kv);
      const fromDeno: number[] = [];
      while (!nodeDone || fromDeno.length < 50) {
        fromDeno.push(await events.append("contended", `deno ${fromDeno.length}`));
        await new Promise((r) => setTimeout(r, 1));
      }
      const { ids } = await fromNode as { ids: number[] };
      const total = fromDeno.length + ids.length;
      assert.deepEqual(
        [...fromDeno, ...ids].sort((a, b) => a - b),
        Array.from({ length: total }, (_, i) => i + 1),
        "Deno and Node appending at once share one id sequence",
      );
      const replayed = await events.replay("contended", 0);
      assert.equal(replayed.length, total);
      for (const [i, id] of ids.entries()) assert.equal(replayed[id - 1].data, `node ${i}`);
      const contended = (await kv.get(["anubis", "events", "contended", "id"])).value;
      assert.ok(contended instanceof Deno.KvU64);
      assert.equal(contended.value, BigInt(total));
    } finally {
      kv.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
