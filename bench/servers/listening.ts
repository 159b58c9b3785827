/**
 * How every benchmark HTTP server serves: `Deno.serve` on loopback with a
 * free port, one line on stderr once it accepts connections (the same shape
 * `cli serve --http` prints, which the orchestrator waits for), and a quiet
 * exit on SIGTERM/SIGINT, or on its own after `BENCH_MAX_SECONDS` (600).
 *
 * Started with `--v8-flags=--expose-gc` (memory runs only), a server also
 * answers `POST /__bench/gc`: it collects garbage the way V8 does when memory
 * runs out (a full, memory-reducing GC that also gives back the heap's free
 * pages, not only a full GC, after which V8 keeps growing room that reads as
 * resident memory) and returns `Deno.memoryUsage()`, so memory per session is
 * read the same way for every server.
 *
 * @module
 */

/** A Web request handler. */
type Handler = (request: Request) => Response | Promise<Response>;

const GC_PATH = "/__bench/gc";

function withGcHook(handler: Handler): Handler {
  const gc = (globalThis as { gc?: (options?: unknown) => void }).gc;
  if (!gc) return handler;
  return (request) => {
    if (!request.url.endsWith(GC_PATH)) return handler(request);
    // "last-resort" is V8's CollectAllAvailableGarbage: repeated full GCs that
    // compact the heap and release its unused pages.
    gc({ type: "major", execution: "sync", flavor: "last-resort" });
    return Response.json(Deno.memoryUsage());
  };
}

/**
 * Serves `handler` on 127.0.0.1 (port `BENCH_PORT`, else a free one) and
 * announces `NAME: listening on http://127.0.0.1:PORT/mcp` on stderr.
 *
 * @param name Who is listening (printed before the address).
 * @param handler The request handler.
 */
export function serveBench(name: string, handler: Handler): void {
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    Deno.addSignalListener(signal, () => Deno.exit(0));
  }
  // Never outlive a lost orchestrator by long: stop after BENCH_MAX_SECONDS (10 minutes).
  const lifetime = Number(Deno.env.get("BENCH_MAX_SECONDS") ?? 600) * 1000;
  Deno.unrefTimer(setTimeout(() => Deno.exit(3), lifetime));
  Deno.serve({
    hostname: "127.0.0.1",
    port: Number(Deno.env.get("BENCH_PORT") ?? 0),
    onListen({ hostname, port }) {
      console.error(`${name}: listening on http://${hostname}:${port}/mcp`);
    },
  }, withGcHook(handler));
}
