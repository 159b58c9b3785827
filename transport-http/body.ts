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
 * becomes U+FFFD. A body whose length is announced is parsed by
 * `Request.json()`: on `Deno.serve` that takes a body already received
 * without a stream, which is markedly cheaper than `text()` once the
 * request's headers have been read. Text that is not JSON gives the `-32700`
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
  if (Number(length) > maxBytes) {
    await request.body?.cancel();
    return undefined;
  }
  let value: unknown;
  try {
    value = await request.json();
  } catch (error) {
    if (error instanceof SyntaxError) return notJson();
    throw error;
  }
  return classifyMessage(value);
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
