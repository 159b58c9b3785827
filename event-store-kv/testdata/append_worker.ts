// Appends `count` events to one session of the KV file at `path` and prints
// the ids it got as JSON. Run by kv_event_store_process_test.ts.
import { KvEventStore } from "../kv_event_store.ts";

const [path, sessionId, count, tag] = Deno.args;
const kv = await Deno.openKv(path);
const store = new KvEventStore(kv);
const ids: number[] = [];
for (let i = 0; i < Number(count); i++) ids.push(await store.append(sessionId, `${tag}:${i}`));
kv.close();
console.log(JSON.stringify(ids));
