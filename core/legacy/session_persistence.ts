/**
 * Turning a live legacy session into a {@link SessionRecord} and back.
 *
 * @module
 */

import type { SessionRecord } from "../session_store.ts";
import type { Session } from "./session.ts";
import type { JsonObject } from "../types.ts";

/**
 * Checks that a value is JSON-safe (what a session store can keep) and names
 * the first path that is not.
 *
 * @param value The value.
 * @param path Where the value sits, for the message.
 * @throws {TypeError} Naming the offending path, such as `assigns.db`.
 *
 * @example
 * ```ts
 * import { assertJsonSafe } from "@anubis/core/engine";
 * import assert from "node:assert/strict";
 * assertJsonSafe({ userId: 7, tags: ["a"] }, "assigns");
 * assert.throws(() => assertJsonSafe({ db: new Map() }, "assigns"), {
 *   message: "assigns.db is not JSON-safe (a Map)",
 * });
 * ```
 */
export function assertJsonSafe(value: unknown, path: string): void {
  const seen = new Set<object>();
  const walk = (v: unknown, at: string): void => {
    if (v === null || typeof v === "string" || typeof v === "boolean") return;
    if (typeof v === "number") {
      if (!Number.isFinite(v)) throw new TypeError(`${at} is not JSON-safe (${v})`);
      return;
    }
    if (typeof v !== "object") throw new TypeError(`${at} is not JSON-safe (a ${typeof v})`);
    if (seen.has(v)) throw new TypeError(`${at} is not JSON-safe (a cycle)`);
    seen.add(v);
    if (Array.isArray(v)) {
      v.forEach((item, i) => walk(item, `${at}.${i}`));
    } else {
      const proto = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) {
        throw new TypeError(
          `${at} is not JSON-safe (a ${v.constructor?.name ?? "class instance"})`,
        );
      }
      for (const [key, item] of Object.entries(v)) walk(item, `${at}.${key}`);
    }
    seen.delete(v);
  };
  walk(value, path);
}

/**
 * Builds the record a session store keeps for a session.
 *
 * @param session An initialized session.
 * @param serializeAssigns The server's projection of assigns (identity by default).
 * @returns The record.
 * @throws {TypeError} When the session is not initialized, or an assign is not JSON-safe.
 *
 * @example
 * ```ts
 * import { Session } from "@anubis/core/engine";
 * import { sessionRecord } from "./session_persistence.ts";
 * import assert from "node:assert/strict";
 * const session = new Session({ id: "s1", transport: "http" });
 * try {
 *   sessionRecord(session);
 * } catch (error) {
 *   assert.equal((error as Error).message, "Session s1 is not initialized");
 * }
 * ```
 */
export function sessionRecord(
  session: Session,
  serializeAssigns?: (assigns: Record<string, unknown>) => JsonObject,
): SessionRecord {
  if (!session.dialect || !session.id) {
    throw new TypeError(`Session ${session.id ?? "(no id)"} is not initialized`);
  }
  const assigns = serializeAssigns
    ? serializeAssigns(session.assigns.value)
    : session.assigns.value;
  assertJsonSafe(assigns, "assigns");
  const record: SessionRecord = {
    v: 1,
    id: session.id,
    protocolVersion: session.dialect.version,
    clientInfo: session.clientInfo as SessionRecord["clientInfo"],
    clientCapabilities: session.clientCapabilities,
    initialized: session.initialized,
    subscriptions: session.subscribedUris(),
    assigns: assigns as JsonObject,
    updatedAt: Date.now(),
  };
  if (session.logLevel) record.logLevel = session.logLevel;
  if (session.owner !== undefined) record.owner = session.owner;
  return record;
}
