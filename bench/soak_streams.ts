/**
 * Soak: SSE streams whose clients stop reading. Serves `SseStream`s on
 * loopback, opens `--streams` raw connections that send a GET and never
 * read, writes ~90-byte events into every stream until it ends (its unread
 * budget is spent) or `--seconds` pass, and prints the server's RSS before,
 * at its peak and after, and how many events each stream took.
 *
 *     deno run -A bench/soak_streams.ts --streams=20 --seconds=10
 *
 * @module
 */

import { encodeSseMessage } from "../transport-http/_sse_encoding.ts";
import { SseStream } from "../transport-http/_sse_stream.ts";

const flag = (name: string, fallback: number) =>
  Number(Deno.args.find((arg) => arg.startsWith(`--${name}=`))?.split("=")[1] ?? fallback);
const STREAMS = flag("streams", 20);
const SECONDS = flag("seconds", 10);
const MB = 1024 * 1024;
const rss = () => Deno.memoryUsage().rss / MB;

const EVENT = '{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"x"}}';
const written: number[] = [];
let peak = 0;

const deadline = Date.now() + SECONDS * 1000;
const streams: Promise<void>[] = [];
const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => {
  const stream = new SseStream();
  const index = written.push(0) - 1;
  streams.push((async () => {
    let id = 0;
    while (Date.now() < deadline) {
      for (let i = 0; i < 200; i++) {
        if (!stream.write(encodeSseMessage(EVENT, ++id))) return;
        written[index]++;
      }
      peak = Math.max(peak, rss());
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
    stream.close();
  })());
  return stream.response();
});

const before = rss();
const sockets: Deno.Conn[] = [];
for (let i = 0; i < STREAMS; i++) {
  const socket = await Deno.connect({ hostname: "127.0.0.1", port: server.addr.port });
  await socket.write(
    new TextEncoder().encode(
      "GET / HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: text/event-stream\r\n\r\n",
    ),
  );
  sockets.push(socket); // never read
}
while (streams.length < STREAMS) await new Promise((resolve) => setTimeout(resolve, 10));
await Promise.all(streams);
const ended = rss();
for (const socket of sockets) socket.close();
await server.shutdown();
console.log(JSON.stringify({
  streams: STREAMS,
  rssBeforeMB: Math.round(before),
  rssPeakMB: Math.round(peak),
  rssGrowthMB: Math.round(peak - before),
  rssAtEndMB: Math.round(ended),
  eventsPerStream: Math.round(written.reduce((a, b) => a + b, 0) / STREAMS),
}));
