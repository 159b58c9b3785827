/**
 * The stdio ceiling: reads newline-delimited JSON-RPC from stdin, parses
 * each line and writes a fixed `tools/call` result with the request's id.
 * Every line read in one chunk is answered in one write.
 *
 * @module
 */

const CALL_RESULT = JSON.stringify({
  content: [{ type: "text", text: "echo: hi" }],
  resultType: "complete",
});
const encoder = new TextEncoder();

/**
 * The ceiling's work on any pair of streams (stdin and stdout when run);
 * the writer is left open.
 *
 * @param readable Where the lines come from.
 * @param writable Where the answers go.
 */
export async function rawEcho(
  readable: ReadableStream<Uint8Array>,
  writable: WritableStream<Uint8Array>,
): Promise<void> {
  const writer = writable.getWriter();
  let buffered = "";
  for await (const chunk of readable.pipeThrough(new TextDecoderStream())) {
    buffered += chunk;
    const lines = buffered.split("\n");
    buffered = lines.pop() ?? "";
    let out = "";
    for (const line of lines) {
      if (!line) continue;
      const message = JSON.parse(line);
      if (message.id === undefined) continue;
      out += `{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"result":${CALL_RESULT}}\n`;
    }
    if (out) await writer.write(encoder.encode(out));
  }
  writer.releaseLock();
}

if (import.meta.main) await rawEcho(Deno.stdin.readable, Deno.stdout.writable);
