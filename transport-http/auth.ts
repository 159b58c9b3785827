/**
 * OAuth 2.1 resource-server auth for the HTTP endpoint (MCP authorization,
 * RFC 6750, RFC 9728, RFC 8707): bearer tokens checked by a
 * {@link TokenVerifier}, protected-resource metadata served at
 * `/.well-known/oauth-protected-resource`, and the spec's `401`/`403`
 * answers with `WWW-Authenticate`. Tokens are never logged.
 *
 * @module
 */

import { type AuthInfo as CoreAuthInfo, ErrorCode } from "@anubis/core";
import { errorResponseOf, jsonResponse } from "./responses.ts";

/**
 * What a verified token says about its caller (core's `AuthInfo`, re-exported
 * here); handlers see it as `frame.auth`.
 *
 * @example
 * ```ts
 * import type { AuthInfo } from "@anubis/transport-http";
 * const info: AuthInfo = { subject: "ada", scopes: ["tools:read"], expiresAt: 2_000_000_000 };
 * if (!info.scopes.includes("tools:read")) throw new Error("scope missing");
 * ```
 */
export type AuthInfo = CoreAuthInfo;

/**
 * Checks a bearer token: resolves with the caller's {@link AuthInfo} or
 * rejects (any error) when the token is not valid for this resource.
 * `resource` is the server's canonical resource URL (RFC 8707), the
 * audience a token must carry unless a verifier is told otherwise.
 *
 * @example
 * ```ts
 * import type { TokenVerifier } from "@anubis/transport-http";
 * const verify: TokenVerifier = (token) =>
 *   token === "let-me-in" ? Promise.resolve({ subject: "ada", scopes: [] }) : Promise.reject(new Error("no"));
 * if ((await verify("let-me-in", new Request("http://localhost/mcp"), "")).subject !== "ada") {
 *   throw new Error("unexpected");
 * }
 * ```
 */
export type TokenVerifier = (
  token: string,
  request: Request,
  resource: string,
) => Promise<AuthInfo>;

/**
 * The `auth` option of the HTTP handler.
 *
 * @example
 * ```ts
 * import type { AuthOptions } from "@anubis/transport-http";
 * const auth: AuthOptions = {
 *   verifyToken: (token) => Promise.resolve({ subject: token, scopes: ["mcp"] }),
 *   authorizationServers: ["https://auth.example.com"],
 *   resource: "https://mcp.example.com/mcp",
 * };
 * if (auth.authorizationServers?.[0] !== "https://auth.example.com") throw new Error("unexpected");
 * ```
 */
export interface AuthOptions {
  /** Checks a token (see `jwtVerifier` and `introspectionVerifier`). */
  verifyToken: TokenVerifier;
  /**
   * The canonical resource URL (RFC 8707), served as `resource` and the
   * default token audience. Default: the request's origin and the endpoint path.
   */
  resource?: string;
  /** Issuers whose tokens are accepted, advertised as `authorization_servers`. */
  authorizationServers?: readonly string[];
  /** Advertised as `scopes_supported`. */
  scopesSupported?: readonly string[];
  /** Scopes every request needs; without them, 403 `insufficient_scope`. */
  requiredScopes?: readonly string[];
  /** Extra members of the protected-resource metadata (`resource_name`…). */
  metadata?: Readonly<Record<string, unknown>>;
  /**
   * How many verified tokens are remembered (default 1,000), each until its
   * expiry and at most `cacheMs`; 0 verifies every request.
   */
  cacheSize?: number;
  /** The longest a verified token is remembered, in milliseconds (default 60 s). */
  cacheMs?: number;
}

const WELL_KNOWN = "/.well-known/oauth-protected-resource";

/** Quotes a value for a `WWW-Authenticate` parameter. */
function quoted(value: string): string {
  return `"${value.replace(/["\\]/g, "\\$&")}"`;
}

/** What {@link ResourceServer.authenticate} decided. */
type Outcome = { info: AuthInfo } | { response: Response };

/**
 * Applies {@link AuthOptions} to requests: serves the metadata, reads the
 * bearer token, verifies it (with a bounded cache) and answers refusals.
 * The handler builds one when `auth` is set.
 */
export class ResourceServer {
  readonly #options: AuthOptions;
  readonly #path: string;
  readonly #cache = new Map<string, { info: AuthInfo; until: number }>();
  readonly #cacheSize: number;
  readonly #cacheMs: number;

  /**
   * Creates it.
   *
   * @param options The auth options.
   * @param path The endpoint path (`"/"` when every path is served).
   */
  constructor(options: AuthOptions, path: string) {
    this.#options = options;
    this.#path = path;
    this.#cacheSize = options.cacheSize ?? 1000;
    this.#cacheMs = options.cacheMs ?? 60_000;
  }

  /** The canonical resource URL for a request. */
  resourceOf(request: Request): string {
    if (this.#options.resource !== undefined) return this.#options.resource;
    return new URL(this.#path, request.url).href;
  }

  /** The metadata URL advertised in `WWW-Authenticate` (path-suffixed below `/`). */
  metadataUrl(request: Request): string {
    const resource = new URL(this.resourceOf(request));
    const suffix = resource.pathname === "/" ? "" : resource.pathname;
    return `${resource.origin}${WELL_KNOWN}${suffix}`;
  }

  /**
   * Tells whether a path is one of the metadata documents.
   *
   * @param path The request path.
   */
  isMetadataPath(path: string): boolean {
    return path === WELL_KNOWN || path === WELL_KNOWN + this.#path;
  }

  /** The RFC 9728 metadata document. */
  metadata(request: Request): Response {
    const body: Record<string, unknown> = {
      ...this.#options.metadata,
      resource: this.resourceOf(request),
      bearer_methods_supported: ["header"],
    };
    if (this.#options.authorizationServers) {
      body.authorization_servers = this.#options.authorizationServers;
    }
    const scopes = this.#options.scopesSupported ?? this.#options.requiredScopes;
    if (scopes) body.scopes_supported = scopes;
    return jsonResponse(body, 200, { "cache-control": "max-age=300" });
  }

  /**
   * Authenticates a request.
   *
   * @param request The request.
   * @returns The caller, or the refusal to send.
   */
  async authenticate(request: Request): Promise<Outcome> {
    const url = request.url;
    const query = url.indexOf("?");
    if (query !== -1 && /(^|&)access_token=/.test(url.slice(query + 1))) {
      return {
        response: this.#refusal(
          request,
          400,
          "invalid_request",
          "Bad Request: access tokens are not accepted in the query string",
        ),
      };
    }
    const header = request.headers.get("authorization");
    if (header === null) {
      return {
        response: this.#refusal(
          request,
          401,
          undefined,
          "Unauthorized: a bearer token is required",
        ),
      };
    }
    const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(header);
    if (match === null) {
      return {
        response: this.#refusal(
          request,
          401,
          "invalid_token",
          "Unauthorized: malformed bearer token",
        ),
      };
    }
    const token = match[1];
    let info = this.#cached(token);
    if (info === undefined) {
      try {
        info = await this.#options.verifyToken(token, request, this.resourceOf(request));
      } catch (error) {
        // The reason only; never the token.
        const reason = error instanceof Error ? error.message : "verification failed";
        return {
          response: this.#refusal(request, 401, "invalid_token", `Unauthorized: ${reason}`),
        };
      }
      this.#remember(token, info);
    }
    const required = this.#options.requiredScopes;
    if (required && !required.every((scope) => info.scopes.includes(scope))) {
      return { response: this.insufficientScope(request, required) };
    }
    return { info };
  }

  /**
   * The 403 `insufficient_scope` answer naming the scopes needed (step-up).
   *
   * @param request The request.
   * @param scopes The scopes needed.
   */
  insufficientScope(request: Request, scopes: readonly string[]): Response {
    return this.#refusal(
      request,
      403,
      "insufficient_scope",
      `Forbidden: the token lacks scope ${scopes.join(" ")}`,
      scopes,
    );
  }

  #cached(token: string): AuthInfo | undefined {
    if (this.#cacheSize === 0) return undefined;
    const hit = this.#cache.get(token);
    if (hit === undefined) return undefined;
    if (hit.until > Date.now()) return hit.info;
    this.#cache.delete(token);
    return undefined;
  }

  #remember(token: string, info: AuthInfo): void {
    if (this.#cacheSize === 0) return;
    let until = Date.now() + this.#cacheMs;
    if (info.expiresAt !== undefined) until = Math.min(until, info.expiresAt * 1000);
    if (this.#cache.size >= this.#cacheSize) {
      // Oldest first (insertion order).
      this.#cache.delete(this.#cache.keys().next().value!);
    }
    this.#cache.set(token, { info, until });
  }

  #refusal(
    request: Request,
    status: number,
    error: string | undefined,
    message: string,
    scopes?: readonly string[],
  ): Response {
    let challenge = `Bearer resource_metadata=${quoted(this.metadataUrl(request))}`;
    if (error !== undefined) challenge += `, error=${quoted(error)}`;
    const needed = scopes ?? this.#options.requiredScopes;
    if (needed && needed.length > 0) challenge += `, scope=${quoted(needed.join(" "))}`;
    if (error !== undefined && status !== 403) {
      challenge += `, error_description=${quoted(message.replace(/[^\x20-\x7e]/g, "?"))}`;
    }
    return errorResponseOf(
      status,
      null,
      ErrorCode.INVALID_REQUEST,
      message,
      undefined,
      { "www-authenticate": challenge },
    );
  }
}
