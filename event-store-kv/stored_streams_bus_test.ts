import assert from "node:assert/strict";
import type { BusMessage, EventStore, SessionRecord } from "@anubis/core";
import { KvEventStore } from "./kv_event_store.ts";
import { StoredStreamsBus } from "./stored_streams_bus.ts";

function record(id: string, extra: Partial<SessionRecord> = {}): SessionRecord {
  return {
    v: 1,
    id,
    protocolVersion: "2025-11-25",
    clientInfo: { name: "c", version: "1" },
    clientCapabilities: {},
    initialized: true,
    subscriptions: [],
    assigns: {},
    updatedAt: 0,
    ...extra,
  };
}

const RECORDS = [
  record("here"),
  record("elsewhere", { subscriptions: ["notes://1"] }),
  record("handshaking", { initialized: false }),
  record("unsubscribed"),
];

async function withBus(
  body: (bus: StoredStreamsBus, store: EventStore, published: BusMessage[]) => Promise<void>,
  wrap: (store: EventStore) => EventStore = (store) => store,
) {
  const kv = await Deno.openKv(":memory:");
  const store = new KvEventStore(kv);
  const published: BusMessage[] = [];
  const bus = new StoredStreamsBus(
    { publish: (m) => published.push(m), subscribe: () => () => {} },
    {
      eventStore: wrap(store),
      sessions: async function* () {
        yield* RECORDS;
      },
      capabilities: { tools: { listChanged: true }, resources: { subscribe: true } },
    },
  );
  try {
    await body(bus, store, published);
  } finally {
    kv.close();
  }
}

Deno.test("stored streams bus: each wanting session not served here gets the change once, in its stream", async () => {
  await withBus(async (bus, store, published) => {
    bus.publish({ event: { type: "tools_list_changed" }, delivered: ["here"] });
    bus.publish({ event: { type: "resource_updated", uri: "notes://1" }, delivered: [] });
    bus.publish({ event: { type: "prompts_list_changed" }, delivered: [] }); // not advertised
    await bus.idle();
    assert.deepEqual(published.map((m) => m.delivered), [
      ["here", "elsewhere", "unsubscribed"],
      ["elsewhere"],
      [],
    ]);
    assert.deepEqual((await store.replay("here", 0)).length, 0);
    assert.deepEqual((await store.replay("elsewhere", 0)).map((e) => JSON.parse(e.data).method), [
      "notifications/tools/list_changed",
      "notifications/resources/updated",
    ]);
    assert.equal((await store.replay("handshaking", 0)).length, 0);
  });
});

Deno.test("stored streams bus: a session whose append failed is left to the instance holding it", async () => {
  await withBus(async (bus, _store, published) => {
    bus.publish({ event: { type: "tools_list_changed" }, delivered: [] });
    await bus.idle();
    assert.deepEqual(published[0].delivered, ["here", "elsewhere"]);
  }, (store) => ({
    ...store,
    shared: true,
    append: (id, data) =>
      id === "unsubscribed" ? Promise.reject(new Error("disk full")) : store.append(id, data),
    replay: (id, after) => store.replay(id, after),
    delete: (id) => store.delete(id),
  }));
});
