/**
 * CORS for browser clients: an opt-in allow-list of origins. Preflights from
 * an allowed origin are answered with the methods and headers MCP uses (and
 * the `Mcp-Param-*` headers the browser asks for, which 2026-07-28 clients
 * send for arguments a tool mirrors into headers); responses to an allowed
 * origin expose the headers a client must read, `Retry-After` included.
 *
 * @module
 */

/**
 * Which browser origins may call the endpoint cross-origin.
 *
 * @example
 * ```ts
 * import type { CorsOptions } from "@anubis/transport-http";
 * const cors: CorsOptions = { origins: ["https://app.example.com"] };
 * if (cors.origins[0] !== "https://app.example.com") throw new Error("unexpected");
 * ```
 */
export interface CorsOptions {
  /**
   * Exact origins (`scheme://host[:port]`) allowed to call cross-origin.
   * Each is also an allowed `Origin` of the DNS-rebinding guard.
   */
  origins: readonly string[];
  /** How long a browser may cache a preflight, in seconds (default 600). */
  maxAgeSeconds?: number;
}

const ALLOW_METHODS = "POST, GET, DELETE";
const ALLOW_HEADERS =
  "content-type, accept, authorization, mcp-session-id, mcp-protocol-version, mcp-method, mcp-name, last-event-id";
const EXPOSE_HEADERS = "mcp-session-id, mcp-protocol-version, www-authenticate, retry-after";
/** An `Mcp-Param-*` name as a browser lists it (lowercase, RFC 9110 token characters). */
const MCP_PARAM = /^mcp-param-[!#$%&'*+.^_`|~0-9a-z-]{1,100}$/;
/** At most this many `Mcp-Param-*` names are echoed by one preflight answer. */
const MAX_PARAM_HEADERS = 64;

/**
 * The fixed allow-list plus the `Mcp-Param-*` names a preflight asks for
 * (`Access-Control-Request-Headers`); the other names it asks for are not
 * echoed, so the rest of the list stays fixed.
 */
function allowedHeaders(requested: string | null): string {
  if (requested === null || !/mcp-param-/i.test(requested)) return ALLOW_HEADERS;
  let allowed = ALLOW_HEADERS;
  let count = 0;
  for (const raw of requested.split(",")) {
    const name = raw.trim().toLowerCase();
    if (!MCP_PARAM.test(name)) continue;
    allowed += ", " + name;
    if (++count === MAX_PARAM_HEADERS) break;
  }
  return allowed;
}

/** Lowercases an origin and drops trailing slashes, as the guard does. */
function normalizeOrigin(origin: string): string {
  return origin.toLowerCase().replace(/\/+$/, "");
}

/**
 * Answers preflights and adds CORS headers for the allowed origins only.
 *
 * @example
 * ```ts
 * import { Cors } from "./cors.ts";
 * const cors = new Cors({ origins: ["https://app.example.com"] });
 * const preflight = cors.preflight(
 *   new Request("http://localhost/mcp", {
 *     method: "OPTIONS",
 *     headers: { origin: "https://app.example.com", "access-control-request-method": "POST" },
 *   }),
 * );
 * if (preflight.status !== 204) throw new Error("expected 204");
 * if (preflight.headers.get("access-control-allow-origin") !== "https://app.example.com") {
 *   throw new Error("expected the origin echoed");
 * }
 * ```
 */
export class Cors {
  readonly #origins: Set<string>;
  readonly #maxAge: string;

  /**
   * Creates the policy.
   *
   * @param options The allow-list.
   */
  constructor(options: CorsOptions) {
    this.#origins = new Set(options.origins.map(normalizeOrigin));
    this.#maxAge = String(options.maxAgeSeconds ?? 600);
  }

  /**
   * The normalized allowed origins.
   *
   * @example
   * ```ts
   * import { Cors } from "./cors.ts";
   * const cors = new Cors({ origins: ["https://app.example.com/"] });
   * if (cors.origins[0] !== "https://app.example.com") throw new Error("not normalized");
   * ```
   */
  get origins(): readonly string[] {
    return [...this.#origins];
  }

  /**
   * Tells whether an `Origin` value is on the allow-list.
   *
   * @param origin The header value.
   * @returns `true` when allowed.
   *
   * @example
   * ```ts
   * import { Cors } from "./cors.ts";
   * const cors = new Cors({ origins: ["https://app.example.com/"] });
   * if (!cors.allows("https://APP.example.com")) throw new Error("expected allowed");
   * if (cors.allows("https://evil.example")) throw new Error("expected refused");
   * ```
   */
  allows(origin: string): boolean {
    return this.#origins.has(normalizeOrigin(origin));
  }

  /**
   * Answers an `OPTIONS` preflight: 204 with the `Access-Control-*` headers
   * for an allowed origin, 403 without them otherwise. The allowed headers
   * are MCP's fixed list plus each `Mcp-Param-*` name the preflight's
   * `Access-Control-Request-Headers` asks for (at most 64).
   *
   * @param request The `OPTIONS` request.
   * @returns The answer.
   *
   * @example
   * ```ts
   * import { Cors } from "./cors.ts";
   * const cors = new Cors({ origins: ["https://app.example.com/"] });
   * const answer = cors.preflight(
   *   new Request("http://localhost/mcp", { method: "OPTIONS", headers: { origin: "https://evil.example" } }),
   * );
   * if (answer.status !== 403) throw new Error("expected 403");
   * const allowed = cors.preflight(
   *   new Request("http://localhost/mcp", {
   *     method: "OPTIONS",
   *     headers: {
   *       origin: "https://app.example.com",
   *       "access-control-request-headers": "content-type, mcp-param-region, x-other",
   *     },
   *   }),
   * ).headers.get("access-control-allow-headers")!;
   * if (!allowed.endsWith(", mcp-param-region")) throw new Error("expected mcp-param-region");
   * if (allowed.includes("x-other")) throw new Error("expected the list fixed otherwise");
   * ```
   */
  preflight(request: Request): Response {
    const origin = request.headers.get("origin");
    if (origin === null || !this.allows(origin)) {
      return new Response("Forbidden: origin not allowed for CORS", {
        status: 403,
        headers: { vary: "Origin" },
      });
    }
    return new Response(null, {
      status: 204,
      headers: {
        "access-control-allow-origin": origin,
        "access-control-allow-methods": ALLOW_METHODS,
        "access-control-allow-headers": allowedHeaders(
          request.headers.get("access-control-request-headers"),
        ),
        "access-control-max-age": this.#maxAge,
        // The allowed headers depend on the requested ones.
        vary: "Origin, Access-Control-Request-Headers",
      },
    });
  }

  /**
   * Adds `Access-Control-Allow-Origin` and `-Expose-Headers` to a response
   * when the request came from an allowed origin, and `Origin` to its `Vary`
   * unless it is there already; otherwise returns it as is.
   *
   * @param request The request.
   * @param response The handler's answer.
   * @returns The answer, with CORS headers where they belong.
   *
   * @example
   * ```ts
   * import { Cors } from "./cors.ts";
   * const cors = new Cors({ origins: ["https://app.example.com/"] });
   * const request = new Request("http://localhost/mcp", { headers: { origin: "https://app.example.com" } });
   * const answer = cors.decorate(request, new Response("ok"));
   * if (answer.headers.get("access-control-allow-origin") !== "https://app.example.com") {
   *   throw new Error("expected the origin echoed");
   * }
   * if (answer.headers.get("vary") !== "Origin") throw new Error("expected one Vary: Origin");
   * ```
   */
  decorate(request: Request, response: Response): Response {
    const origin = request.headers.get("origin");
    if (origin === null || !this.allows(origin)) return response;
    let target = response;
    try {
      target.headers.set("access-control-allow-origin", origin);
    } catch {
      // Immutable headers (a fetched Response): copy it.
      target = new Response(response.body, response);
      target.headers.set("access-control-allow-origin", origin);
    }
    target.headers.set("access-control-expose-headers", EXPOSE_HEADERS);
    // A preflight's answer (or the application's) may name Origin already.
    const vary = target.headers.get("vary");
    if (vary === null) target.headers.set("vary", "Origin");
    else if (!/(^|,)\s*origin\s*(,|$)/i.test(vary)) target.headers.set("vary", vary + ", Origin");
    return target;
  }
}
