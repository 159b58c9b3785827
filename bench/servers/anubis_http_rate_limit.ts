/**
 * The bare handler with per-caller rate limits on, set so high nothing is
 * refused: what taking a token costs each POST. In memory by default; with
 * `BENCH_RATE_LIMIT_KV=1`, the buckets are a `KvRateLimitStore` on a fresh
 * KV file (one read and one commit per POST, as across instances):
 *
 * ```sh
 * deno task bench:ab .:bench/servers/anubis_http.ts .:bench/servers/anubis_http_rate_limit.ts
 * BENCH_RATE_LIMIT_KV=1 deno task bench:ab .:bench/servers/anubis_http.ts .:bench/servers/anubis_http_rate_limit.ts
 * ```
 *
 * @module
 */

import { KvRateLimitStore } from "@anubis/session-kv";
import { createHttpHandler } from "@anubis/transport-http";
import server from "./echo_server.ts";
import { serveBench } from "./listening.ts";

const kv = Deno.env.get("BENCH_RATE_LIMIT_KV") === "1"
  ? await Deno.openKv(`${await Deno.makeTempDir({ prefix: "anubis-bench-rate-" })}/rate.kv`)
  : undefined;
const handler = createHttpHandler(server, {
  rateLimit: {
    perSecond: 1e9,
    burst: 1e9,
    store: kv === undefined ? undefined : new KvRateLimitStore(kv),
  },
});

serveBench(kv === undefined ? "anubis-rate-limit" : "anubis-rate-limit-kv", handler);
