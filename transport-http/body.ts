/**
 * Reading a request body with a size bound, without buffering more than the
 * bound allows.
 *
 * @module
 */

/**
 * Reads a request body as bytes (decoded later by the strict JSON-RPC
 * decoder, so invalid UTF-8 is a parse error), refusing bodies over `maxBytes`
 * (by `Content-Length` before reading, and while reading when the length is
 * not announced).
 *
 * @param request The request.
 * @param maxBytes The bound.
 * @returns The bytes, or `undefined` when the body is too large.
 *
 * @example
 * ```ts
 * import { readBody } from "@anubis/transport-http";
 * const request = new Request("http://localhost/mcp", { method: "POST", body: "0123456789" });
 * console.log(await readBody(request, 4)); // undefined
 * ```
 */
export async function readBody(
  request: Request,
  maxBytes: number,
): Promise<Uint8Array | undefined> {
  const length = request.headers.get("content-length");
  if (length !== null) {
    if (Number(length) > maxBytes) return undefined;
    return new Uint8Array(await request.arrayBuffer());
  }
  if (!request.body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = request.body.getReader();
  while (true) {
    const { value, done } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      return undefined;
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
