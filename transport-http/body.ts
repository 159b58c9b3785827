/**
 * Reading a request body with a size bound, without buffering more than the
 * bound allows.
 *
 * @module
 */

/**
 * Reads a request body as text (invalid UTF-8 becomes U+FFFD, as
 * `Request.text()` does; decoding strictly would cost more than the rest of
 * the read), refusing bodies over `maxBytes`: by `Content-Length` before
 * reading, and while reading when the length is not announced.
 *
 * @param request The request.
 * @param maxBytes The bound.
 * @returns The text, or `undefined` when the body is too large.
 *
 * @example
 * ```ts
 * import { readBody } from "@anubis/transport-http";
 * const request = new Request("http://localhost/mcp", { method: "POST", body: "0123456789" });
 * console.log(await readBody(request, 4)); // undefined
 * ```
 */
export async function readBody(request: Request, maxBytes: number): Promise<string | undefined> {
  const length = request.headers.get("content-length");
  if (length !== null) {
    if (Number(length) > maxBytes) {
      await request.body?.cancel();
      return undefined;
    }
    return await request.text();
  }
  if (!request.body) return "";
  const reader = request.body.getReader();
  const decoder = new TextDecoder();
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
