import assert from "node:assert/strict";
import {
  type EventStore,
  MemoryTaskStore,
  type SessionRecord,
  type SessionStore,
  type StoredEvent,
  type TaskOutcome,
  type TaskPage,
  type TaskRecord,
} from "@anubis/core";
import { eventStoreContract, sessionStoreContract, taskStoreContract } from "./mod.ts";

class MapEventStore implements EventStore {
  events = new Map<string, StoredEvent[]>();
  append(sessionId: string, data: string): Promise<number> {
    const list = this.events.get(sessionId) ?? [];
    const id = (list.at(-1)?.id ?? 0) + 1;
    list.push({ id, data });
    this.events.set(sessionId, list);
    return Promise.resolve(id);
  }
  replay(sessionId: string, afterId: number): Promise<StoredEvent[]> {
    return Promise.resolve((this.events.get(sessionId) ?? []).filter((e) => e.id > afterId));
  }
  latestId(sessionId: string): Promise<number> {
    return Promise.resolve(this.events.get(sessionId)?.at(-1)?.id ?? 0);
  }
  delete(sessionId: string): Promise<void> {
    this.events.delete(sessionId);
    return Promise.resolve();
  }
}

/** Keys sessions by prefix, so "a" also replays "a:1" and "ab": the classic leak. */
class LeakyEventStore extends MapEventStore {
  override replay(sessionId: string, afterId: number): Promise<StoredEvent[]> {
    const all = [...this.events].filter(([k]) => k.startsWith(sessionId)).flatMap(([, v]) => v);
    return Promise.resolve(all.filter((e) => e.id > afterId));
  }
}

/** Allocates ids from a counter read before an await: concurrent appends collide. */
class RacyEventStore extends MapEventStore {
  override async append(sessionId: string, data: string): Promise<number> {
    const id = (await this.latestId(sessionId)) + 1;
    await new Promise((r) => setTimeout(r, 0));
    const list = this.events.get(sessionId) ?? [];
    list.push({ id, data });
    this.events.set(sessionId, list);
    return id;
  }
}

class MapSessionStore implements SessionStore {
  records = new Map<string, { record: SessionRecord; expiresAt: number }>();
  save(record: SessionRecord, ttlMs: number): Promise<void> {
    this.records.set(record.id, { record: structuredClone(record), expiresAt: Date.now() + ttlMs });
    return Promise.resolve();
  }
  load(id: string): Promise<SessionRecord | undefined> {
    const entry = this.records.get(id);
    return Promise.resolve(
      entry && entry.expiresAt > Date.now() ? structuredClone(entry.record) : undefined,
    );
  }
  touch(id: string, ttlMs: number): Promise<void> {
    const entry = this.records.get(id);
    if (entry) entry.expiresAt = Date.now() + ttlMs;
    return Promise.resolve();
  }
  delete(id: string): Promise<void> {
    this.records.delete(id);
    return Promise.resolve();
  }
}

/** Forgets to check expiry on read. */
class ImmortalSessionStore extends MapSessionStore {
  override load(id: string): Promise<SessionRecord | undefined> {
    return Promise.resolve(this.records.get(id)?.record);
  }
}

for (const c of eventStoreContract(() => ({ store: new MapEventStore() }))) Deno.test(c.name, c.fn);
for (const c of sessionStoreContract(() => ({ store: new MapSessionStore() }))) {
  Deno.test(c.name, c.fn);
}

async function failing(cases: { name: string; fn: () => Promise<void> }[], name: string) {
  const found = cases.find((c) => c.name.endsWith(name));
  assert.ok(found, name);
  await assert.rejects(found.fn());
}

Deno.test("the event store contract catches cross-session replay and racy ids", async () => {
  await failing(
    eventStoreContract(() => ({ store: new LeakyEventStore() })),
    "never replays another session's events",
  );
  await failing(
    eventStoreContract(() => ({ store: new RacyEventStore() })),
    "every id once, with no gap",
  );
});

Deno.test("the session store contract catches a store that never expires", async () => {
  await failing(
    sessionStoreContract(() => ({ store: new ImmortalSessionStore() })),
    "touch extends them",
  );
});

/** Writes every outcome it is given: a late cancel erases a result. */
class OverwritingTaskStore extends MemoryTaskStore {
  override async finish(id: string, outcome: TaskOutcome): Promise<TaskRecord | undefined> {
    const record = await this.get(id);
    if (!record) return undefined;
    await this.delete(id);
    await this.create({ ...record, ...outcome, status: outcome.status });
    return this.get(id);
  }
}

/** Lists every task, whoever owns it. */
class LeakyTaskStore extends MemoryTaskStore {
  override async list(owner: string, options?: { cursor?: string; limit?: number }) {
    const page: TaskPage = await super.list(owner, options);
    const others = await super.list("them");
    return { ...page, tasks: [...page.tasks, ...others.tasks] };
  }
}

/** Hands out its own records: a caller's edit changes the stored task. */
class SharingTaskStore extends MemoryTaskStore {
  #records = new Map<string, TaskRecord>();
  override async create(record: TaskRecord): Promise<void> {
    await super.create(record);
    this.#records.set(record.id, record);
  }
  override async get(id: string): Promise<TaskRecord | undefined> {
    return (await super.get(id)) && this.#records.get(id);
  }
}

for (const c of taskStoreContract(() => ({ store: new MemoryTaskStore() }))) {
  Deno.test(c.name, c.fn);
}

Deno.test("the task store contract catches overwritten outcomes, leaks and shared records", async () => {
  await failing(
    taskStoreContract(() => ({ store: new OverwritingTaskStore() })),
    "an outcome is written once, and a terminal task never moves",
  );
  await failing(
    taskStoreContract(() => ({ store: new LeakyTaskStore() })),
    "only the owner's tasks, oldest first, page by page",
  );
  await failing(
    taskStoreContract(() => ({ store: new SharingTaskStore() })),
    "create then get returns an equal copy",
  );
});
