/**
 * The bare handler with OAuth auth on: `jwtVerifier` over a static ES256
 * key (a bench-only key pair, not a secret) (verified tokens cached, as by default). `deno run bench/servers/anubis_http_auth.ts --token`
 * prints a valid token; give it to the load as `BENCH_AUTH_TOKEN`:
 *
 * ```sh
 * BENCH_AUTH_TOKEN=$(deno run -A bench/servers/anubis_http_auth.ts --token) \
 *   deno task bench:ab .:bench/servers/anubis_http.ts .:bench/servers/anubis_http_auth.ts
 * ```
 *
 * @module
 */

import * as jose from "jose";
import { createHttpHandler, jwtVerifier } from "@anubis/transport-http";
import server from "./echo_server.ts";
import { serveBench } from "./listening.ts";

const PRIVATE = {
  kty: "EC",
  crv: "P-256",
  d: "0BUUAtVQ87Yk81MIICa-8ryOl656OUMwDeDHySkPg1Q",
  x: "xEBzsmBW-OpMT4il9l5Jm7sB0BA-qV26s_t2CEwpqyw",
  y: "BnmGKCsC1jWN-71qPa6TOYnf55-sZKsZtrGSviVTyM8",
};
const ISSUER = "https://bench.issuer";
const RESOURCE = "http://bench.local/mcp";
const { d: _, ...PUBLIC } = PRIVATE;
const key = { ...PUBLIC, alg: "ES256", kid: "bench" };

if (Deno.args.includes("--token")) {
  const token = await new jose.SignJWT({ scope: "mcp" })
    .setProtectedHeader({ alg: "ES256", kid: "bench" })
    .setIssuer(ISSUER)
    .setAudience(RESOURCE)
    .setSubject("bench")
    .setExpirationTime("1d")
    .sign(await jose.importJWK(PRIVATE, "ES256"));
  console.log(token);
} else {
  const handler = createHttpHandler(server, {
    auth: {
      verifyToken: jwtVerifier({ issuer: ISSUER, keys: [key], algorithms: ["ES256"] }),
      resource: RESOURCE,
    },
  });
  serveBench("anubis-auth", handler);
}
