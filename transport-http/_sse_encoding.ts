/**
 * The Server-Sent Events wire format: events, comments and the priming
 * event, encoded as UTF-8 bytes ready to enqueue.
 *
 * @module
 */

const encoder = new TextEncoder();

/**
 * One SSE event.
 *
 * @example
 * ```ts
 * import type { SseEvent } from "./_sse_encoding.ts";
 * const event: SseEvent = { id: 3, event: "message", data: '{"jsonrpc":"2.0","method":"x"}' };
 * ```
 */
export interface SseEvent {
  /** The event id (`id:` field), when the stream is resumable. */
  id?: number | string;
  /** The event type (`event:` field). */
  event?: string;
  /** The payload; one line (compact JSON never holds a raw newline). */
  data: string;
  /** The reconnection delay in milliseconds (`retry:` field). */
  retry?: number;
}

/**
 * Encodes one event. Data with line breaks is split over several `data:`
 * lines, as the format requires.
 *
 * @param event The event.
 * @returns The bytes, ending with the blank line that dispatches the event.
 *
 * @example
 * ```ts
 * import { encodeSseEvent } from "./_sse_encoding.ts";
 * import assert from "node:assert/strict";
 * const text = new TextDecoder().decode(encodeSseEvent({ event: "message", data: "{}" }));
 * assert.equal(text, "event: message\ndata: {}\n\n");
 * ```
 */
export function encodeSseEvent(event: SseEvent): Uint8Array {
  let text = "";
  if (event.id !== undefined) text += `id: ${event.id}\n`;
  if (event.event !== undefined) text += `event: ${event.event}\n`;
  if (event.retry !== undefined) text += `retry: ${event.retry}\n`;
  const data = event.data;
  text += data.includes("\n") || data.includes("\r")
    ? data.split(/\r\n|\r|\n/).map((line) => `data: ${line}\n`).join("")
    : `data: ${data}\n`;
  return encoder.encode(text + "\n");
}

/**
 * Encodes a comment line (ignored by clients; keeps idle connections open).
 *
 * @param text The comment, one line.
 * @returns The bytes.
 *
 * @example
 * ```ts
 * import { encodeSseComment } from "./_sse_encoding.ts";
 * import assert from "node:assert/strict";
 * assert.equal(new TextDecoder().decode(encodeSseComment("keepalive")), ": keepalive\n\n");
 * ```
 */
export function encodeSseComment(text: string): Uint8Array {
  return encoder.encode(`: ${text}\n\n`);
}

/**
 * Encodes a JSON-RPC message as a `message` event.
 *
 * @param json The message as compact JSON text.
 * @param id The event id, on resumable streams.
 * @returns The bytes.
 *
 * @example
 * ```ts
 * import { encodeSseMessage } from "./_sse_encoding.ts";
 * import assert from "node:assert/strict";
 * const text = new TextDecoder().decode(encodeSseMessage('{"jsonrpc":"2.0","id":1,"result":{}}', 7));
 * assert.equal(text.startsWith("id: 7\nevent: message\n"), true);
 * ```
 */
export function encodeSseMessage(json: string, id?: number): Uint8Array {
  return encodeSseEvent({ id, event: "message", data: json });
}
