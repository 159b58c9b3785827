/**
 * Opening a KV file and a {@link KvEventStore} (or a {@link KvNotificationBus})
 * on it in one call (Deno), for `--event-store kv[:PATH]`.
 *
 * @module
 */

import { dirname } from "node:path";
import type { BusMessage } from "@anubis/core";
import { DEFAULT_KV_PATH, isKvFilePath, type KvLike } from "@anubis/core/kv";
import { KvEventStore, type KvEventStoreOptions } from "./kv_event_store.ts";
import { KvNotificationBus, type KvNotificationBusOptions } from "./kv_notification_bus.ts";

/**
 * Opens (creating its folder) the KV database at `path` with `Deno.openKv`.
 * `":memory:"` gives a private in-memory database; an `http(s)://` URL a KV
 * Connect backend such as self-hosted denokv. Needs `--unstable-kv`.
 *
 * @param path The file, `":memory:"` or URL (default {@link DEFAULT_KV_PATH}).
 * @returns The database, typed as the {@link KvLike} the stores take, so the
 *   published declarations name no `Deno` type (a Node project type-checks
 *   them without Deno's types); it is a `Deno.Kv`.
 *
 * @example
 * ```ts
 * import { openKvPath } from "@anubis/event-store-kv";
 * const kv = await openKvPath(":memory:");
 * kv.close();
 * ```
 */
export async function openKvPath(path: string = DEFAULT_KV_PATH): Promise<KvLike> {
  if (isKvFilePath(path)) await Deno.mkdir(dirname(path), { recursive: true });
  return await Deno.openKv(path);
}

/**
 * Opens the KV database at `path` and returns an event store that owns it
 * (`store.close()` closes the database). On Node, open the database with
 * `openKv` from `npm:@deno/kv` and pass it to `new KvEventStore(kv)` instead.
 *
 * @param path The file, `":memory:"` or URL (default {@link DEFAULT_KV_PATH}).
 * @param options Store options.
 * @returns The store.
 *
 * @example
 * ```ts
 * import { openKvEventStore } from "@anubis/event-store-kv";
 * import assert from "node:assert/strict";
 * const store = await openKvEventStore(":memory:", { ttlMs: 10 * 60_000 });
 * assert.equal(await store.append("s", "hello"), 1);
 * store.close();
 * ```
 */
export async function openKvEventStore(
  path: string = DEFAULT_KV_PATH,
  options: Omit<KvEventStoreOptions, "closeKv"> = {},
): Promise<KvEventStore> {
  return new KvEventStore(await openKvPath(path), { ...options, closeKv: true });
}

/**
 * Opens the KV database at `path` and returns a notification bus that owns it
 * (`await bus.close()` closes the database), already following its channel.
 *
 * @param path The file, `":memory:"` or URL (default {@link DEFAULT_KV_PATH}).
 * @param options Bus options (`channel`: one per server).
 * @returns The bus.
 *
 * @example
 * ```ts
 * import { openKvNotificationBus } from "@anubis/event-store-kv";
 * const bus = await openKvNotificationBus(":memory:", { channel: "weather" });
 * bus.publish({ event: { type: "tools_list_changed" }, delivered: [] });
 * await bus.close();
 * ```
 */
export async function openKvNotificationBus<M extends object = BusMessage>(
  path: string = DEFAULT_KV_PATH,
  options: Omit<KvNotificationBusOptions, "closeKv"> = {},
): Promise<KvNotificationBus<M>> {
  const bus = new KvNotificationBus<M>(await openKvPath(path), { ...options, closeKv: true });
  try {
    await bus.start();
  } catch (error) {
    await bus.close();
    throw error;
  }
  return bus;
}
