/**
 * What the session table keeps per live session, shared by the table
 * (`_session_table.ts`) and its cross-instance links (`_session_links.ts`).
 *
 * @module
 */

import type { Session } from "@anubis/core/engine";
import type { StandaloneStream } from "./_standalone_stream.ts";

/**
 * A live session and its standalone stream.
 *
 * @example
 * ```ts
 * import type { SessionEntry } from "./_session_entry.ts";
 * const describe = (entry: SessionEntry) => `${entry.session.id} ${entry.stream?.attached}`;
 * ```
 */
export interface SessionEntry {
  /** The engine's session. */
  readonly session: Session;
  /**
   * Its standalone SSE stream, made on the first GET (or, with an event
   * store, on the first message to record); most sessions never open one.
   */
  stream?: StandaloneStream;
  /** The last record saved, without its timestamp (to skip unchanged saves). */
  saved?: string;
  /** When the store's TTL was last extended. */
  touchedAt: number;
  /** Who opened it, for the per-client bound. */
  client?: string;
  /** The bytes of its record in the session store, as this instance last wrote or read it. */
  storedBytes?: number;
  /**
   * The bytes charged to the handler's retained budget for it (its client's
   * handshake data and subscriptions), given back when it leaves the table.
   */
  retained?: number;
}
