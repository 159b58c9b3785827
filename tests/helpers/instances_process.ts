/**
 * Test helpers for many `cli serve` processes on one KV file: start an
 * instance of the everything server, find its URL from the line it prints,
 * stop it gently or kill it, and route one client's requests to whichever
 * instance the test chooses.
 *
 * @module
 */

import { startHttpServer } from "./everything_http_server.ts";

/** A running `cli serve --http` child process. */
export interface Instance {
  /** Its endpoint, e.g. `http://127.0.0.1:41234/mcp`. */
  readonly url: string;
  /** Stops it with `signal` (default SIGTERM) and returns its exit code and stderr. */
  stop(signal?: Deno.Signal): Promise<{ code: number; stderr: string }>;
}

/** Which stores an instance keeps on the KV file (default: both). */
export type InstanceStores = "both" | "events" | "sessions";

/**
 * Starts `cli serve examples/everything.ts --http --port 0` with the stores
 * `stores` names on the KV file `kvPath` (and `flags` added), and waits for
 * its "listening on" line.
 */
export async function startInstance(
  kvPath: string,
  stores: InstanceStores = "both",
  flags: string[] = [],
): Promise<Instance> {
  const server = await startHttpServer([
    ...(stores === "sessions" ? [] : ["--event-store", `kv:${kvPath}`]),
    ...(stores === "events" ? [] : ["--session-store", `kv:${kvPath}`]),
    ...flags,
  ]);
  return { url: server.url.href, stop: server.stop };
}

/**
 * A `fetch` for the SDK's transport that sends each request to the instance
 * the test currently names, whatever URL the transport was given: one client
 * session driven through several processes, as a load balancer would.
 */
export class Router {
  /** Where the next request of each kind goes. */
  target: { post: string; get: string; delete: string };
  /** Every request routed: method, the instance URL it went to, its `Last-Event-ID`. */
  readonly log: { method: string; url: string; lastEventId?: string }[] = [];
  /** The routed requests whose response headers arrived. */
  readonly answered: { method: string; url: string; status: number }[] = [];

  /** Routes every request to `url` until told otherwise. */
  constructor(url: string) {
    this.target = { post: url, get: url, delete: url };
  }

  /** The `fetch` to hand to `StreamableHTTPClientTransport`. */
  readonly fetch = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const method = (init?.method ?? (input instanceof Request ? input.method : "GET"))
      .toUpperCase();
    const url = method === "POST"
      ? this.target.post
      : method === "DELETE"
      ? this.target.delete
      : this.target.get;
    const lastEventId = new Headers(init?.headers).get("last-event-id") ?? undefined;
    this.log.push({ method, url, lastEventId });
    return fetch(url, init).then((response) => {
      this.answered.push({ method, url, status: response.status });
      return response;
    });
  };
}
