/**
 * DNS-rebinding protection: `Origin` and `Host` validation against
 * allow-lists, loopback only by default.
 *
 * @module
 */

/**
 * Which origins and hosts a handler accepts.
 *
 * @example
 * ```ts
 * import type { OriginPolicy } from "@anubis/transport-http";
 * const policy: OriginPolicy = { allowedOrigins: ["https://app.example.com"], allowedHosts: "*" };
 * ```
 */
export interface OriginPolicy {
  /**
   * `Origin` values accepted besides loopback ones (`http://localhost:3000`,
   * `http://127.0.0.1`, `http://[::1]:8080`…), or `"*"` for any. A request
   * without `Origin` (not from a browser) always passes.
   */
  allowedOrigins?: readonly string[] | "*";
  /**
   * `Host` values accepted besides loopback names, as `name` (any port) or
   * `name:port`, or `"*"` for any (what a public deployment behind its own
   * host routing uses).
   */
  allowedHosts?: readonly string[] | "*";
}

/**
 * Why a request was refused.
 *
 * @example
 * ```ts
 * import type { Refusal } from "./origin.ts";
 * const refusal: Refusal = { status: 403, message: "Forbidden: origin not allowed" };
 * ```
 */
export interface Refusal {
  /** 403 for a bad `Origin`, 421 for a bad `Host`. */
  status: 403 | 421;
  /** A one-line reason. */
  message: string;
}

/**
 * Tells whether a host name (without port; IPv6 in brackets or bare) is a
 * loopback name.
 *
 * @param hostname The name.
 * @returns `true` for `localhost`, `*.localhost`, `127.0.0.0/8` and `::1`.
 *
 * @example
 * ```ts
 * import { isLoopbackHost } from "@anubis/transport-http";
 * import assert from "node:assert/strict";
 * assert.equal(isLoopbackHost("127.0.0.1"), true);
 * assert.equal(isLoopbackHost("evil.example.com"), false);
 * ```
 */
export function isLoopbackHost(hostname: string): boolean {
  const name = hostname.toLowerCase();
  return name === "localhost" || name.endsWith(".localhost") || name === "[::1]" ||
    name === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
}

/** Splits `name[:port]` (IPv6 in brackets) into its lowercased name. */
function hostnameOf(host: string): string {
  const lower = host.toLowerCase();
  if (lower.startsWith("[")) {
    const end = lower.indexOf("]");
    return end === -1 ? lower : lower.slice(0, end + 1);
  }
  const colon = lower.indexOf(":");
  return colon === -1 ? lower : lower.slice(0, colon);
}

/**
 * Checks requests against an {@link OriginPolicy}.
 *
 * @example
 * ```ts
 * import { OriginGuard } from "./origin.ts";
 * import assert from "node:assert/strict";
 * const guard = new OriginGuard({});
 * const evil = new Request("http://127.0.0.1/mcp", {
 *   headers: { host: "127.0.0.1:8080", origin: "http://evil.example.com" },
 * });
 * assert.equal(guard.check(evil)?.status, 403);
 * ```
 */
export class OriginGuard {
  readonly #anyOrigin: boolean;
  readonly #origins: Set<string>;
  readonly #anyHost: boolean;
  readonly #hosts: Set<string>;
  readonly #hostAnswers = new Map<string, boolean>();
  #lastHost: string | undefined;
  #lastHostAllowed = false;

  /**
   * Creates the guard.
   *
   * @param policy The allow-lists.
   */
  constructor(policy: OriginPolicy) {
    this.#anyOrigin = policy.allowedOrigins === "*";
    this.#origins = new Set(
      policy.allowedOrigins === "*"
        ? []
        : (policy.allowedOrigins ?? []).map((o) => o.toLowerCase().replace(/\/+$/, "")),
    );
    this.#anyHost = policy.allowedHosts === "*";
    this.#hosts = new Set(
      policy.allowedHosts === "*" ? [] : (policy.allowedHosts ?? []).map((h) => h.toLowerCase()),
    );
  }

  /**
   * Checks a request's `Origin` (first) and `Host`.
   *
   * @param request The request.
   * @returns The refusal, or `undefined` when the request may proceed.
   *
   * @example
   * ```ts
   * import { OriginGuard } from "./origin.ts";
   * import assert from "node:assert/strict";
   * const guard = new OriginGuard({ allowedOrigins: ["https://app.example.com"] });
   * const from = (origin: string) => new Request("http://localhost/mcp", { headers: { origin } });
   * assert.equal(guard.check(from("https://app.example.com")), undefined);
   * assert.equal(guard.check(from("https://evil.example.com"))?.status, 403);
   * assert.equal(guard.check(new Request("http://mcp.example.com/mcp"))?.status, 421);
   * ```
   */
  check(request: Request): Refusal | undefined {
    // `has` first, as most requests carry no Origin. It is also the first
    // header read of a request: on Deno it fetches the whole header list in
    // one runtime call (which Deno makes anyway once a handler has touched
    // the headers), so every later `get` is a lookup in JS, not a call each.
    const origin = request.headers.has("origin") ? request.headers.get("origin") : null;
    if (origin !== null && !this.#anyOrigin && !this.#originAllowed(origin)) {
      return { status: 403, message: `Forbidden: origin ${origin} is not allowed` };
    }
    if (this.#anyHost) return undefined;
    const host = request.headers.get("host") ?? new URL(request.url).host;
    if (!this.#hostAllowed(host)) {
      return { status: 421, message: `Misdirected Request: host ${host} is not allowed` };
    }
    return undefined;
  }

  #originAllowed(origin: string): boolean {
    const normalized = origin.toLowerCase();
    if (this.#origins.has(normalized)) return true;
    const scheme = normalized.indexOf("://");
    if (scheme === -1) return false;
    return isLoopbackHost(hostnameOf(normalized.slice(scheme + 3)));
  }

  #hostAllowed(host: string): boolean {
    // Clients repeat their Host on every request: comparing it with the last
    // one is cheaper than hashing a new string for the map below.
    if (host === this.#lastHost) return this.#lastHostAllowed;
    const allowed = this.#hostAnswer(host);
    this.#lastHost = host;
    this.#lastHostAllowed = allowed;
    return allowed;
  }

  #hostAnswer(host: string): boolean {
    // A server sees few distinct Host values: remember the answers (bounded).
    let allowed = this.#hostAnswers.get(host);
    if (allowed !== undefined) return allowed;
    const lower = host.toLowerCase();
    const name = hostnameOf(lower);
    allowed = isLoopbackHost(name) || this.#hosts.has(lower) || this.#hosts.has(name);
    if (this.#hostAnswers.size >= 256) this.#hostAnswers.clear();
    this.#hostAnswers.set(host, allowed);
    return allowed;
  }
}
