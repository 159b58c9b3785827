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
const writer = Deno.stdout.writable.getWriter();
let buffered = "";
for await (const chunk of Deno.stdin.readable.pipeThrough(new TextDecoderStream())) {
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
