// Appends `count` events to one session of the KV file at `path`, one every
// few milliseconds. Run by kv_event_store_process_test.ts.
import { KvEventStore } from "../kv_event_store.ts";

const [path, sessionId, count] = Deno.args;
const kv = await Deno.openKv(path);
const store = new KvEventStore(kv);
for (let i = 0; i < Number(count); i++) {
  await store.append(sessionId, `live ${i}`);
  await new Promise((r) => setTimeout(r, 5));
}
kv.close();
