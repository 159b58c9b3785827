/**
 * Helpers of the tests that every resumed stream ends: a slow tool call
 * answered as a recorded POST stream, a resume with `Last-Event-ID`, and
 * reading a stream to its end within a bound that tells a stream the server
 * ended from one the test gave up on.
 *
 * @module
 */

import assert from "node:assert/strict";
import { type ParsedEvent, post, SseReader } from "./http_helpers.ts";

/** The protocol version with resumable POST streams. */
export const VERSION = "2025-11-25";

/** The headers of a request of session `sessionId`. */
export function sessionHeaders(sessionId: string): Record<string, string> {
  return { "mcp-session-id": sessionId, "mcp-protocol-version": VERSION };
}

/**
 * Calls `name` with `args` and a progress token as request `id`; the answer
 * must be an SSE stream. Returns its reader and the priming event's id.
 */
export async function callStreaming(
  url: string,
  sessionId: string,
  id: number,
  name: string,
  args: Record<string, unknown>,
): Promise<{ reader: SseReader; primingId: string }> {
  const response = await post(url, {
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name, arguments: args, _meta: { progressToken: `token-${id}` } },
  }, sessionHeaders(sessionId));
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("content-type"), "text/event-stream");
  const reader = new SseReader(response);
  const priming = await reader.next();
  assert.equal(priming?.data, "", "the stream opens with its priming event");
  assert.match(priming?.id ?? "", /^\d+-\d+$/);
  return { reader, primingId: priming!.id! };
}

/** The next event with data (a message), with its id. */
export async function nextMessage(reader: SseReader): Promise<ParsedEvent> {
  for (let event = await reader.next(); event; event = await reader.next()) {
    if (event.data) return event;
  }
  throw new Error("the stream ended before a message");
}

/** Resumes a stream of session `sessionId` at `url` after `lastEventId` (GET). */
export async function resume(
  url: string,
  sessionId: string,
  lastEventId: string,
): Promise<Response> {
  return await fetch(url, {
    headers: {
      ...sessionHeaders(sessionId),
      accept: "text/event-stream",
      "last-event-id": lastEventId,
    },
  });
}

/** A stream read to its end: its messages, and whether the server ended it. */
export interface ReadStream {
  /** The messages (events with data), parsed, with their SSE ids. */
  messages: { id?: string; message: Record<string, unknown> }[];
  /** `true` when the server ended the stream; `false` when the bound ran out first. */
  ended: boolean;
  /** `performance.now()` when the read stopped. */
  at: number;
}

/**
 * Reads `reader` until the server ends the stream, or until `boundMs` passed
 * (then the test stops reading and `ended` is `false`).
 */
export async function readToEnd(reader: SseReader, boundMs: number): Promise<ReadStream> {
  const messages: ReadStream["messages"] = [];
  let gaveUp = false;
  const bound = setTimeout(() => {
    gaveUp = true;
    reader.cancel().catch(() => {});
  }, boundMs);
  try {
    for (let event = await reader.next(); event; event = await reader.next()) {
      if (event.data) messages.push({ id: event.id, message: JSON.parse(event.data) });
    }
  } catch (error) {
    if (!gaveUp) throw error;
  } finally {
    clearTimeout(bound);
  }
  return { messages, ended: !gaveUp, at: performance.now() };
}
