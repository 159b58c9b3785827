/**
 * OAuth 2.1 resource-server auth for the HTTP endpoint (MCP authorization,
 * RFC 6750, RFC 9728, RFC 8707): bearer tokens checked by a
 * {@link TokenVerifier}, protected-resource metadata served at
 * `/.well-known/oauth-protected-resource`, and the spec's `401`/`403`
 * answers with `WWW-Authenticate`. Tokens are never logged.
 *
 * @module
 */

import { type AuthInfo as CoreAuthInfo, ErrorCode, type RequestId } from "@anubis/core";
import { principalOf } from "@anubis/core/engine";
import { errorResponseOf, jsonResponse } from "./_json_responses.ts";

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
 * What a {@link TokenVerifier} rejects with when it cannot tell whether a
 * token is valid through no fault of the token: the key set or the
 * introspection endpoint is unreachable. The caller gets 503 with
 * `Retry-After` instead of 401 (its token may be fine); the message is
 * sent as is, so it names no URL or path.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { VerifierUnavailableError } from "@anubis/transport-http";
 * const error = new VerifierUnavailableError("the signing keys are unavailable", 5_000);
 * assert.equal(error.retryAfterMs, 5_000);
 * assert.ok(error instanceof Error);
 * ```
 */
export class VerifierUnavailableError extends Error {
  /**
   * When to try again, in milliseconds.
   *
   * @example
   * ```ts
   * import { VerifierUnavailableError } from "@anubis/transport-http";
   * import assert from "node:assert/strict";
   * const error = new VerifierUnavailableError("the key set is unreachable", 30_000);
   * assert.equal(error.retryAfterMs, 30_000);
   * ```
   */
  readonly retryAfterMs: number;

  /**
   * Creates it.
   *
   * @param message What is unavailable (sent to the caller: no URL, no path).
   * @param retryAfterMs When to try again, in milliseconds (at least 1 s is sent).
   */
  constructor(message: string, retryAfterMs: number) {
    super(message);
    this.name = "VerifierUnavailableError";
    this.retryAfterMs = retryAfterMs;
  }
}

/**
 * Checks a bearer token: resolves with the caller's {@link AuthInfo} or
 * rejects (any error) when the token is not valid for this resource
 * ({@link VerifierUnavailableError} when the verifier itself cannot tell).
 * `resource` is the server's canonical resource URL (RFC 8707), fixed when
 * the handler is made, the audience a token must carry unless a verifier is
 * told otherwise; it never depends on the request's `Host`.
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
   * default token audience: the URL clients use (behind a proxy, the public
   * one). Required by `createHttpHandler`; `serve()` defaults it to the URL
   * it listens on (`http://<hostname>:<port><path>`). Never taken from a
   * request's `Host`, so a token minted for another resource cannot be
   * passed off as one for this by naming that resource's host.
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
   * expiry and at most `cacheMs`; 0 verifies every request. A token is
   * remembered as verified for the one resource (audience) of the handler.
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

/** Why a request is refused, before its id is known. */
export interface Refusal {
  /** The HTTP status. */
  status: number;
  /** The `error` of the challenge (none for a request without a token). */
  error?: string;
  /** The message (of the JSON-RPC error and the challenge's description). */
  message: string;
  /** The scopes needed (403). */
  scopes?: readonly string[];
  /** For a 503: when to try again. */
  retryAfterMs?: number;
}

/** What {@link ResourceServer.authenticate} decided. */
type Outcome = { info: AuthInfo } | { refusal: Refusal };

/**
 * Applies {@link AuthOptions} to requests: serves the metadata, reads the
 * bearer token, verifies it (with a bounded cache) and answers refusals.
 * The handler builds one when `auth` is set. Its resource is fixed: by the
 * options, or once by the listener ({@link ResourceServer.fixResource}).
 */
export class ResourceServer {
  readonly #options: AuthOptions;
  readonly #path: string;
  readonly #cache = new Map<string, { info: AuthInfo; until: number }>();
  readonly #cacheSize: number;
  readonly #cacheMs: number;
  #resource: string | undefined;
  #metadataUrl = "";

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
    if (options.resource !== undefined) this.fixResource(options.resource);
  }

  /** Whether the resource URL is known (from the options, or fixed by the listener). */
  get hasResource(): boolean {
    return this.#resource !== undefined;
  }

  /**
   * Fixes the canonical resource URL, once: a listener's URL when the
   * options named none.
   *
   * @param resource The URL.
   */
  fixResource(resource: string): void {
    if (this.#resource !== undefined) return;
    const url = new URL(resource);
    this.#resource = resource;
    const suffix = url.pathname === "/" ? "" : url.pathname;
    this.#metadataUrl = `${url.origin}${WELL_KNOWN}${suffix}`;
  }

  /** The canonical resource URL. */
  get resource(): string {
    if (this.#resource === undefined) throw new Error("the auth resource URL is not fixed yet");
    return this.#resource;
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
  metadata(): Response {
    const body: Record<string, unknown> = {
      ...this.#options.metadata,
      resource: this.resource,
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
   * @returns The caller, or why it is refused.
   */
  async authenticate(request: Request): Promise<Outcome> {
    const url = request.url;
    const query = url.indexOf("?");
    if (query !== -1 && /(^|&)access_token=/.test(url.slice(query + 1))) {
      return {
        refusal: {
          status: 400,
          error: "invalid_request",
          message: "Bad Request: access tokens are not accepted in the query string",
        },
      };
    }
    const header = request.headers.get("authorization");
    if (header === null) {
      return {
        refusal: { status: 401, message: "Unauthorized: a bearer token is required" },
      };
    }
    const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(header);
    if (match === null) {
      return {
        refusal: {
          status: 401,
          error: "invalid_token",
          message: "Unauthorized: malformed bearer token",
        },
      };
    }
    const token = match[1];
    let info = this.#cached(token);
    if (info === undefined) {
      try {
        info = await this.#options.verifyToken(token, request, this.resource);
      } catch (error) {
        if (error instanceof VerifierUnavailableError) {
          return {
            refusal: {
              status: 503,
              message: `Service Unavailable: ${error.message}`,
              retryAfterMs: error.retryAfterMs,
            },
          };
        }
        // The reason only; never the token.
        const reason = error instanceof Error ? error.message : "verification failed";
        return {
          refusal: { status: 401, error: "invalid_token", message: `Unauthorized: ${reason}` },
        };
      }
      // A caller with neither subject nor client id would share its sessions,
      // tasks and rate limit with every other such caller.
      if (principalOf(info) === undefined) {
        return {
          refusal: {
            status: 401,
            error: "invalid_token",
            message: "Unauthorized: the token names neither a subject nor a client",
          },
        };
      }
      this.#remember(token, info);
    }
    const required = this.#options.requiredScopes;
    if (required && !required.every((scope) => info.scopes.includes(scope))) {
      return { refusal: this.insufficientScope(required) };
    }
    return { info };
  }

  /**
   * The 403 `insufficient_scope` refusal naming the scopes needed (step-up).
   *
   * @param scopes The scopes needed.
   */
  insufficientScope(scopes: readonly string[]): Refusal {
    return {
      status: 403,
      error: "insufficient_scope",
      message: `Forbidden: the token lacks scope ${scopes.join(" ")}`,
      scopes,
    };
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

  /** A `WWW-Authenticate` challenge: the metadata URL, the error and the scopes needed. */
  #challenge(error: string | undefined, scopes: readonly string[] | undefined): string {
    let challenge = `Bearer resource_metadata=${quoted(this.#metadataUrl)}`;
    if (error !== undefined) challenge += `, error=${quoted(error)}`;
    if (scopes && scopes.length > 0) challenge += `, scope=${quoted(scopes.join(" "))}`;
    return challenge;
  }

  /**
   * Gives a 403 the engine answered (a tool, resource or prompt whose
   * `requiredScopes` the caller lacks; its JSON-RPC error names them in
   * `data.scopes`) the `insufficient_scope` challenge of a step-up. Read only
   * for a 403, so other answers cost a status comparison.
   *
   * @param response The 403 of an authenticated request.
   */
  async stepUp(response: Response): Promise<Response> {
    const text = await response.text();
    let scopes: unknown;
    try {
      scopes = (JSON.parse(text) as { error?: { data?: { scopes?: unknown } } }).error?.data
        ?.scopes;
    } catch {
      // Not a JSON-RPC error: passed on as it was.
    }
    const answer = new Response(text, { status: 403, headers: response.headers });
    if (Array.isArray(scopes) && scopes.every((scope) => typeof scope === "string")) {
      answer.headers.set("www-authenticate", this.#challenge("insufficient_scope", scopes));
    }
    return answer;
  }

  /**
   * The answer to a refusal: a JSON-RPC error echoing the request's id when
   * it could be read, with the spec's `WWW-Authenticate` (and `Retry-After`
   * for a 503).
   *
   * @param refusal Why.
   * @param id The request id, or `null`.
   */
  respond(refusal: Refusal, id: RequestId | null): Response {
    const { status, error, message } = refusal;
    const headers: Record<string, string> = {};
    if (status === 503) {
      headers["retry-after"] = String(Math.max(1, Math.ceil((refusal.retryAfterMs ?? 0) / 1000)));
    } else {
      let challenge = this.#challenge(error, refusal.scopes ?? this.#options.requiredScopes);
      if (error !== undefined && status !== 403) {
        challenge += `, error_description=${quoted(message.replace(/[^\x20-\x7e]/g, "?"))}`;
      }
      headers["www-authenticate"] = challenge;
    }
    return errorResponseOf(
      status,
      id,
      status === 503 ? ErrorCode.INTERNAL_ERROR : ErrorCode.INVALID_REQUEST,
      message,
      { headers },
    );
  }
}
