/**
 * The stdio ceiling: reads newline-delimited JSON-RPC from stdin, parses
 * each line and writes a fixed `tools/call` result with the request's id.
 * Every line read in one chunk is answered in one write; on stdout, encoded
 * into one reused buffer, and stdin is read into one reused buffer (as
 * `serveStdio` does on Deno).
 *
 * @module
 */

const CALL_RESULT = JSON.stringify({
  content: [{ type: "text", text: "echo: hi" }],
  resultType: "complete",
});
const encoder = new TextEncoder();
const buffer = new Uint8Array(64 * 1024);

/** The text as UTF-8, in the reused buffer when allowed and it fits (each write is awaited before the next). */
function encode(text: string, reuse: boolean): Uint8Array {
  if (reuse && text.length <= buffer.length) {
    const { read, written } = encoder.encodeInto(text, buffer);
    if (read === text.length) return buffer.subarray(0, written);
  }
  return encoder.encode(text);
}

/** A stream's chunks; a byte stream's read into one reused buffer (each valid until the next). */
async function* chunksOf(readable: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  let reader: ReadableStreamBYOBReader;
  try {
    reader = readable.getReader({ mode: "byob" });
  } catch {
    yield* readable;
    return;
  }
  let spare: ArrayBufferLike = new ArrayBuffer(64 * 1024);
  while (true) {
    const { value, done }: ReadableStreamReadResult<Uint8Array> = await reader.read(
      new Uint8Array(spare),
    );
    if (done || !value) return;
    spare = value.buffer;
    yield value;
  }
}

/**
 * The ceiling's work on any pair of streams (stdin and stdout when run);
 * the writer is left open.
 *
 * @param readable Where the lines come from.
 * @param writable Where the answers go.
 * @param reusableChunks Whether the stream is done with a chunk once its
 * write settles (Deno's stdout), so one buffer is encoded into again and again.
 */
export async function rawEcho(
  readable: ReadableStream<Uint8Array>,
  writable: WritableStream<Uint8Array>,
  reusableChunks = false,
): Promise<void> {
  const writer = writable.getWriter();
  const decoder = new TextDecoder();
  let buffered = "";
  for await (const bytes of chunksOf(readable)) {
    buffered += decoder.decode(bytes, { stream: true });
    const lines = buffered.split("\n");
    buffered = lines.pop() ?? "";
    let out = "";
    for (const line of lines) {
      if (!line) continue;
      const message = JSON.parse(line);
      if (message.id === undefined) continue;
      out += `{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"result":${CALL_RESULT}}\n`;
    }
    if (out) await writer.write(encode(out, reusableChunks));
  }
  writer.releaseLock();
}

if (import.meta.main) await rawEcho(Deno.stdin.readable, Deno.stdout.writable, true);
