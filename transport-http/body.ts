/**
 * Reading a request body with a size bound, without buffering more than the
 * bound allows.
 *
 * @module
 */

import { classifyMessage, type Decoded, decodeMessage, notJson } from "@anubis/core";

/**
 * Reads and classifies a JSON-RPC body, refusing bodies over `maxBytes`: by
 * `Content-Length` before reading, and while reading when the length is not
 * announced, so no more than the bound is ever buffered. Invalid UTF-8
 * becomes U+FFFD. A body announced at up to 64 KiB is parsed by
 * `Request.json()`: on `Deno.serve` that takes a body already received
 * without a stream, which is markedly cheaper than `text()` once the
 * request's headers have been read. A larger one is read as a stream, since
 * `json()` reserves the announced length before a byte arrives: memory then
 * follows the bytes received, not the bytes announced (1,000 clients that
 * announce 4 MiB and send one byte cost kilobytes, not gigabytes). Text that is not JSON gives the `-32700`
 * classification, and so does a body that starts with a byte order mark
 * (`Deno.serve`'s `json()` does not skip it, so neither does the streamed
 * path); a failing read rejects.
 *
 * @param request The request.
 * @param maxBytes The bound.
 * @returns The classification, or `undefined` when the body is too large.
 *
 * @example
 * ```ts
 * import { readMessage } from "@anubis/transport-http";
 * const post = (body: string) => new Request("http://localhost/mcp", { method: "POST", body });
 * console.log((await readMessage(post('{"jsonrpc":"2.0","id":1,"method":"ping"}'), 1024))?.kind); // request
 * console.log((await readMessage(post("{not json"), 1024))?.kind); // invalid
 * console.log(await readMessage(post("0123456789"), 4)); // undefined
 * ```
 */
export async function readMessage(
  request: Request,
  maxBytes: number,
): Promise<Decoded | undefined> {
  const length = request.headers.get("content-length");
  if (length === null) {
    // A byte order mark stays in the text, so it is refused as `json()`
    // refuses it on Deno.serve (RFC 8259 §8.1: senders must not send one).
    const text = await readUnannounced(request, maxBytes);
    return text === undefined ? undefined : decodeMessage(text);
  }
  const announced = Number(length);
  if (announced > maxBytes) {
    await request.body?.cancel();
    return undefined;
  }
  if (announced > RESERVE_MAX_BYTES) return decodeMessage(await readAnnounced(request, announced));
  let value: unknown;
  try {
    value = await request.json();
  } catch (error) {
    if (error instanceof SyntaxError) return notJson();
    throw error;
  }
  return classifyMessage(value);
}

/** The largest announced body read with `json()`, which reserves its announced length up front. */
const RESERVE_MAX_BYTES = 64 * 1024;

/**
 * Reads a body of an announced length into a buffer that grows with what
 * arrived (doubling from 16 KiB, never past the announced length), with
 * reads of its own size, so a slow client holds what it sent.
 */
async function readAnnounced(request: Request, announced: number): Promise<string> {
  if (!request.body) return "";
  const reader = request.body.getReader({ mode: "byob" });
  let buffer = new Uint8Array(Math.min(announced, 16 * 1024));
  let used = 0;
  try {
    while (used < announced) {
      if (used === buffer.byteLength) {
        const grown = new Uint8Array(Math.min(announced, buffer.byteLength * 2));
        grown.set(buffer);
        buffer = grown;
      }
      const { value, done } = await reader.read(buffer.subarray(used));
      if (done || !value) break;
      buffer = new Uint8Array(value.buffer); // the read hands the buffer back
      used += value.byteLength;
    }
  } finally {
    reader.releaseLock();
  }
  return new TextDecoder("utf-8", { ignoreBOM: true }).decode(buffer.subarray(0, used));
}

/**
 * Reads a body without `Content-Length` as text (a byte order mark kept),
 * stopping once it passes `maxBytes`.
 */
async function readUnannounced(request: Request, maxBytes: number): Promise<string | undefined> {
  if (!request.body) return "";
  const reader = request.body.getReader();
  const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  let text = "";
  let total = 0;
  while (true) {
    const { value, done } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      return undefined;
    }
    text += decoder.decode(value, { stream: true });
  }
  return text + decoder.decode();
}
