import assert from "node:assert/strict";
import { type BusMessage, defineServer, Notifier } from "@anubis/core";
import { type Dialect, Engine, Registry } from "@anubis/core/engine";
import type { KvKeyPart } from "@anubis/core/kv";
import { KvNotificationBus } from "./kv_notification_bus.ts";
import { ExpiringKv } from "./testdata/expiring_kv.ts";

/** Two buses on one file through two database handles, as two processes would have. */
async function withTwoBuses(
  body: (a: KvNotificationBus, b: KvNotificationBus) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "anubis-bus-" });
  const path = `${dir}/bus.kv`;
  const a = new KvNotificationBus(await Deno.openKv(path), { closeKv: true, pollIntervalMs: 20 });
  const b = new KvNotificationBus(await Deno.openKv(path), { closeKv: true, pollIntervalMs: 20 });
  try {
    await a.start();
    await b.start();
    await body(a, b);
  } finally {
    await a.close();
    await b.close();
    await Deno.remove(dir, { recursive: true });
  }
}

async function countKeys(kv: ExpiringKv, prefix: KvKeyPart[]): Promise<number> {
  return (await Array.fromAsync(kv.list({ prefix }))).length;
}

function received(bus: KvNotificationBus, count: number): Promise<BusMessage[]> {
  const messages: BusMessage[] = [];
  return new Promise((resolve) => {
    const stop = bus.subscribe((message) => {
      messages.push(message);
      if (messages.length === count) {
        stop();
        resolve(messages);
      }
    });
  });
}

Deno.test("kv notification bus: another instance's messages arrive in order, never one's own", async () => {
  await withTwoBuses(async (a, b) => {
    const atA = received(a, 3);
    const ownAtB: BusMessage[] = [];
    const stopB = b.subscribe((message) => ownAtB.push(message));
    b.publish({ event: { type: "tools_list_changed" }, delivered: ["s1"] });
    b.publish({ event: { type: "resource_updated", uri: "test://x" }, delivered: [] });
    b.publish({ event: { type: "prompts_list_changed" }, delivered: [] });
    assert.deepEqual(await atA, [
      { event: { type: "tools_list_changed" }, delivered: ["s1"] },
      { event: { type: "resource_updated", uri: "test://x" }, delivered: [] },
      { event: { type: "prompts_list_changed" }, delivered: [] },
    ]);
    // A's own message goes round the log to B; B never heard its own.
    const atB = received(b, 1);
    a.publish({ event: { type: "resources_list_changed" }, delivered: [] });
    assert.deepEqual((await atB)[0].event, { type: "resources_list_changed" });
    stopB();
    assert.equal(ownAtB.some((m) => m.event.type === "tools_list_changed"), false);
  });
});

Deno.test("kv notification bus: a session served where the change was raised is skipped elsewhere", async () => {
  await withTwoBuses(async (busA, busB) => {
    const server = defineServer({
      name: "bus",
      version: "1",
      capabilities: { tools: { listChanged: true } },
    });
    const notifierB = new Notifier();
    const disconnectA = server.notify.connect(busA);
    const disconnectB = notifierB.connect(busB);
    const engine = new Engine(server, { registry: new Registry() });
    const seen: Record<string, unknown[]> = { shared: [], onlyA: [] };
    const heard = new Promise<void>((resolve) => {
      for (const id of ["shared", "onlyA"]) {
        const session = engine.createSession({
          id,
          transport: "http",
          onMessage: (message) => {
            seen[id].push(message);
            if (id === "onlyA") resolve();
          },
        });
        session.completeHandshake({} as Dialect, {}, {}); // as after a handshake
        session.markInitialized();
      }
    });
    // B served "shared" itself (its copy of that session), so A serves only "onlyA".
    notifierB.subscribe(() => ["shared"]);
    notifierB.toolsListChanged();
    await heard;
    assert.deepEqual(seen.shared, []);
    assert.deepEqual(seen.onlyA, [{ jsonrpc: "2.0", method: "notifications/tools/list_changed" }]);
    engine.close();
    disconnectA();
    disconnectB();
  });
});

Deno.test("kv notification bus: a failed read does not end following", async () => {
  const kv = await Deno.openKv(":memory:");
  let failures = 0;
  // The listening side's database fails its next read once.
  const flaky = new Proxy(kv, {
    get(target, property) {
      if (property === "get" && failures > 0) {
        failures--;
        return () => Promise.reject(new Error("disk I/O error"));
      }
      const value = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const listening = new KvNotificationBus(flaky, { pollIntervalMs: 10 });
  const raising = new KvNotificationBus(kv, { pollIntervalMs: 10 });
  const errors: unknown[] = [];
  const consoleError = console.error;
  console.error = (...args: unknown[]) => errors.push(args);
  try {
    await listening.start();
    await raising.start();
    const heard = received(listening, 1);
    failures = 1;
    raising.publish({ event: { type: "prompts_list_changed" }, delivered: [] });
    assert.deepEqual((await heard)[0].event, { type: "prompts_list_changed" });
    assert.equal(errors.length, 1);
  } finally {
    console.error = consoleError;
    await listening.close();
    await raising.close();
    kv.close();
  }
});

Deno.test("kv notification bus: a deleted channel that began again is followed, even past the old ids before a poll", async () => {
  const dir = await Deno.makeTempDir({ prefix: "anubis-bus-" });
  const path = `${dir}/bus.kv`;
  const kv = await Deno.openKv(path);
  const listening = new KvNotificationBus(await Deno.openKv(path), {
    closeKv: true,
    pollIntervalMs: 300,
  });
  const raising = new KvNotificationBus(kv, { pollIntervalMs: 20 });
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await listening.start();
    await raising.start();
    const before = received(listening, 2);
    raising.publish({ event: { type: "tools_list_changed" }, delivered: [] });
    raising.publish({ event: { type: "prompts_list_changed" }, delivered: [] });
    assert.equal((await before).length, 2);
    // Every key of the channel goes (a channel's counter never expires, but a
    // database may be cleaned by hand, or an older instance's counter expired).
    const keys = await Array.fromAsync(kv.list({ prefix: ["anubis", "bus"] }), (e) => e.key);
    const op = kv.atomic();
    for (const key of keys) op.delete(key);
    await op.commit();
    // As many messages as before, both before the listener's next poll.
    const after = received(listening, 2);
    raising.publish({ event: { type: "resources_list_changed" }, delivered: [] });
    raising.publish({ event: { type: "resource_updated", uri: "x" }, delivered: [] });
    const missed = new Promise<never>((_, reject) =>
      timer = setTimeout(
        () => reject(new Error("the new channel's messages were missed")),
        3_000,
      )
    );
    assert.deepEqual((await Promise.race([after, missed])).map((m) => m.event), [
      { type: "resources_list_changed" },
      { type: "resource_updated", uri: "x" },
    ]);
  } finally {
    clearTimeout(timer);
    await listening.close();
    await raising.close();
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("kv notification bus: a channel's counter never expires, only its messages do", async () => {
  const expiring = await ExpiringKv.open();
  const listening = new KvNotificationBus(expiring, { pollIntervalMs: 5 });
  const raising = new KvNotificationBus(expiring, { pollIntervalMs: 5 });
  try {
    await listening.start();
    await raising.start();
    const first = received(listening, 1);
    raising.publish({ event: { type: "tools_list_changed" }, delivered: [] });
    await first;
    await expiring.advance(365 * 24 * 60 * 60_000); // a quiet year
    assert.equal(await countKeys(expiring, ["anubis", "bus", "changes", "ev"]), 0);
    assert.equal(expiring.deadline(["anubis", "bus", "changes", "id"]), undefined);
    assert.notEqual((await expiring.get(["anubis", "bus", "changes", "id"])).value, null);
    const second = received(listening, 1);
    raising.publish({ event: { type: "prompts_list_changed" }, delivered: [] });
    assert.deepEqual((await second)[0].event, { type: "prompts_list_changed" });
  } finally {
    await listening.close();
    await raising.close();
    expiring.close();
  }
});
