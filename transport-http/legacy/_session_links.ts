/**
 * What ties a legacy session to more than its requests: the standalone
 * stream its client holds open (which keeps the session and its store record
 * alive), and the other instances serving the same session (the session bus:
 * one standalone stream across them, and client answers reaching the
 * instance that asked).
 *
 * @module
 */

import type { NotificationBus, SessionStore } from "@anubis/core";
import { logger } from "@anubis/core";
import type { JsonRpcErrorResponse, JsonRpcResultResponse } from "@anubis/core/engine";
import type { SessionBusMessage } from "./session_bus_message.ts";
import type { SessionEntry } from "./_session_entry.ts";

/**
 * Options of {@link SessionLinks}.
 *
 * @example
 * ```ts
 * import type { SessionLinksOptions } from "./_session_links.ts";
 * const options: SessionLinksOptions = { idleMs: 60_000 };
 * ```
 */
export interface SessionLinksOptions {
  /** A session with no message and no open stream for this long expires (the store TTL). */
  idleMs: number;
  /** Where held sessions' records are touched. */
  sessionStore?: SessionStore;
  /** Joins the other instances sharing the stores. */
  sessionBus?: NotificationBus<SessionBusMessage>;
}

/**
 * The stream holds and the session bus of one session table.
 *
 * @example
 * ```ts
 * import { SessionLinks } from "./_session_links.ts";
 * const links = new SessionLinks({ idleMs: 60_000 }, () => undefined);
 * links.close();
 * ```
 */
export class SessionLinks {
  readonly #options: SessionLinksOptions;
  readonly #find: (sessionId: string) => SessionEntry | undefined;
  readonly #unsubscribe?: () => void;

  /**
   * Joins the session bus, if any.
   *
   * @param options The idle time, the session store and the bus.
   * @param find The live session of an id (what the bus speaks about).
   */
  constructor(
    options: SessionLinksOptions,
    find: (sessionId: string) => SessionEntry | undefined,
  ) {
    this.#options = options;
    this.#find = find;
    this.#unsubscribe = options.sessionBus?.subscribe((message) => this.#heard(message));
  }

  /**
   * Keeps a session alive while the client holds its standalone stream, which
   * POSTs alone would not: its store record is touched now and every quarter
   * of `idleMs` while the connection lasts (one timer per open connection,
   * nothing per event), and its idle time counts from when the stream ended.
   * With a session bus, the other instances close the session's older stream.
   * A connection that already ended (superseded while it attached) starts
   * nothing.
   *
   * @param entry The session.
   * @param signal The connection's signal: aborts when it ends.
   *
   * @example
   * ```ts
   * import { defineServer } from "@anubis/core";
   * import { Engine } from "@anubis/core/engine";
   * import { createDefaultRegistry } from "@anubis/dialects";
   * import { SessionLinks } from "./_session_links.ts";
   * import assert from "node:assert/strict";
   * const engine = new Engine(defineServer({ name: "s", version: "1" }), {
   *   registry: createDefaultRegistry(),
   * });
   * const session = engine.createSession({ id: "s1", transport: "http" });
   * const links = new SessionLinks({ idleMs: 60_000 }, () => undefined);
   * const connection = new AbortController();
   * links.hold({ session, touchedAt: 0 }, connection.signal);
   * connection.abort(); // the stream ended: its idle time starts now
   * assert.equal(session.lastActivity > 0, true);
   * engine.close();
   * ```
   */
  hold(entry: SessionEntry, signal: AbortSignal): void {
    const { session } = entry;
    session.touch();
    // Its abort listener would never run: a timer started now would outlive
    // the connection, and its stream_opened would close a newer stream.
    if (signal.aborted || session.closed) return;
    this.#options.sessionBus?.publish({
      type: "stream_opened",
      sessionId: session.id!,
      order: entry.stream?.order,
    });
    const store = this.#options.sessionStore;
    let timer: ReturnType<typeof setInterval> | undefined;
    if (store) {
      const touch = () => {
        if (session.closed || signal.aborted) return clearInterval(timer);
        entry.touchedAt = session.touch();
        store.touch(session.id!, this.#options.idleMs).catch((error) =>
          logger.error("store.failed", `session store failed touching ${session.id}`, { error })
        );
      };
      touch();
      timer = setInterval(touch, this.#options.idleMs / 4);
    }
    signal.addEventListener("abort", () => {
      clearInterval(timer);
      session.touch();
    }, { once: true });
  }

  /**
   * Delivers a client's answer to the server-to-client request it answers;
   * when this instance did not send it, to the other instances (one of them
   * did: the client posts wherever its load balancer sends it). Only ids in
   * the form the SDK issues (`anubis-<hex>-<n>`) with another session
   * object's prefix travel: a late answer to a request sent here, or an id
   * no server issued, goes nowhere.
   *
   * @param entry The session.
   * @param response The client's response.
   *
   * @example
   * ```ts
   * import { defineServer } from "@anubis/core";
   * import { Engine } from "@anubis/core/engine";
   * import { createDefaultRegistry } from "@anubis/dialects";
   * import { type SessionBusMessage } from "@anubis/transport-http";
   * import { SessionLinks } from "./_session_links.ts";
   * import assert from "node:assert/strict";
   * const engine = new Engine(defineServer({ name: "s", version: "1" }), {
   *   registry: createDefaultRegistry(),
   * });
   * const session = engine.createSession({ id: "s1", transport: "http" });
   * const sent: SessionBusMessage[] = [];
   * const sessionBus = { publish: (m: SessionBusMessage) => void sent.push(m), subscribe: () => () => {} };
   * const links = new SessionLinks({ idleMs: 60_000, sessionBus }, () => undefined);
   * const entry = { session, touchedAt: 0 };
   * links.answer(entry, { jsonrpc: "2.0", id: 7, result: {} }); // no server issued it: dropped
   * links.answer(entry, { jsonrpc: "2.0", id: "anubis-0123456789abcdef-1", result: {} });
   * assert.equal(sent.length, 1);
   * engine.close();
   * ```
   */
  answer(entry: SessionEntry, response: JsonRpcResultResponse | JsonRpcErrorResponse): void {
    const { session } = entry;
    if (session.resolve(response)) return;
    if (!session.askedElsewhere(response.id)) return;
    this.#options.sessionBus?.publish({
      type: "response",
      sessionId: session.id!,
      message: response,
    });
  }

  /**
   * Leaves the session bus.
   *
   * @example
   * ```ts
   * import { SessionLinks } from "./_session_links.ts";
   * new SessionLinks({ idleMs: 60_000 }, () => undefined).close();
   * ```
   */
  close(): void {
    this.#unsubscribe?.();
  }

  /** What another instance said about a session this one may hold. */
  #heard(message: SessionBusMessage): void {
    const entry = this.#find(message?.sessionId);
    if (!entry) return;
    if (message.type === "stream_opened") entry.stream?.supersede(message.order);
    else if (
      message.type === "response" && message.message && typeof message.message === "object"
    ) {
      entry.session.resolve(message.message);
    }
  }
}
