/**
 * A minimal OTLP/HTTP sink for the telemetry A/B: accepts every export
 * (reads the body, answers 200) and counts them, so the exporter does its
 * real work without a collector installed. `--port=N` (default 4318);
 * prints `otlp sink: listening on URL`, and the export count on SIGTERM.
 *
 * @module
 */

const port = Number(Deno.args.find((arg) => arg.startsWith("--port="))?.slice(7) ?? 4318);
let exports = 0;
let bytes = 0;
const sink = Deno.serve({
  hostname: "127.0.0.1",
  port,
  onListen: ({ hostname, port }) =>
    console.error(`otlp sink: listening on http://${hostname}:${port}`),
}, async (request) => {
  bytes += (await request.arrayBuffer()).byteLength;
  exports++;
  return new Response(null, { status: 200 });
});
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  Deno.addSignalListener(signal, async () => {
    console.error(`otlp sink: ${exports} exports, ${bytes} bytes`);
    await sink.shutdown();
    Deno.exit(0);
  });
}
// Never outlive a forgotten run by long.
Deno.unrefTimer(setTimeout(() => Deno.exit(3), 15 * 60_000));
