/**
 * The one line every benchmark server prints on stderr once it accepts
 * connections; the orchestrator waits for it (the same shape `cli serve
 * --http` prints).
 *
 * @module
 */

/**
 * Options for `Deno.serve` on loopback with a free port, announcing the
 * endpoint on stderr when listening.
 *
 * @param name Who is listening (printed before the address).
 * @returns The serve options.
 */
export function loopback(name: string): Deno.ServeTcpOptions {
  return {
    hostname: "127.0.0.1",
    port: Number(Deno.env.get("BENCH_PORT") ?? 0),
    onListen({ hostname, port }) {
      console.error(`${name}: listening on http://${hostname}:${port}/mcp`);
    },
  };
}

/**
 * Stops the process on SIGTERM/SIGINT with exit code 0, so the orchestrator
 * can end servers quietly.
 */
export function exitOnSignal(): void {
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    Deno.addSignalListener(signal, () => Deno.exit(0));
  }
}
