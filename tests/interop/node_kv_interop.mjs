// Node side of node_kv_interop_test.ts: uses the bundled KV stores on a KV
// file through npm:@deno/kv. Usage: node node_kv_interop.mjs <bundle dir> <kv path> <step>
// Prints one JSON line with what it read or wrote.
import { openKv } from "@deno/kv";
import { pathToFileURL } from "node:url";

const [bundleDir, kvPath, step] = process.argv.slice(2);
const { KvEventStore } = await import(pathToFileURL(`${bundleDir}/event_store_kv.js`).href);
const { KvSessionStore } = await import(pathToFileURL(`${bundleDir}/session_kv.js`).href);

const kv = await openKv(kvPath);
const events = new KvEventStore(kv);
const sessions = new KvSessionStore(kv);
let out;
try {
  if (step === "read") {
    out = {
      events: await events.replay("from-deno", 0),
      latestId: await events.latestId("from-deno"),
      session: await sessions.load("deno-session"),
    };
  } else if (step === "write") {
    const ids = [];
    for (const data of ["node 1", "ü".repeat(70_000), "node 3"]) {
      ids.push(await events.append("from-node", data));
    }
    await sessions.save({
      v: 1,
      id: "node-session",
      protocolVersion: "2025-03-26",
      clientInfo: { name: "node-client", version: "2.0.0" },
      clientCapabilities: { roots: {} },
      initialized: false,
      subscriptions: [],
      assigns: { runtime: "node", big: "n".repeat(80_000) },
      updatedAt: 7,
    }, 60_000);
    await sessions.touch("deno-session", 60_000);
    out = { ids };
  } else if (step === "contend") {
    const ids = [];
    for (let i = 0; i < 200; i++) ids.push(await events.append("contended", `node ${i}`));
    out = { ids };
  } else {
    throw new Error(`unknown step ${step}`);
  }
} finally {
  kv.close();
}
console.log(JSON.stringify(out));
