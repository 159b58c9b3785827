/**
 * A {@link TokenVerifier} that asks the authorization server (RFC 7662
 * token introspection), for opaque tokens.
 *
 * @module
 */

import { type TokenVerifier, VerifierUnavailableError } from "./auth.ts";
import { authInfoOf } from "./jwt_verifier.ts";

/**
 * Options of {@link introspectionVerifier}.
 *
 * @example
 * ```ts
 * import type { IntrospectionOptions } from "@anubis/transport-http";
 * const options: IntrospectionOptions = {
 *   endpoint: "https://auth.example.com/introspect",
 *   clientId: "mcp-server",
 *   clientSecret: "secret",
 * };
 * if (options.audience !== undefined) throw new Error("defaults apply");
 * ```
 */
export interface IntrospectionOptions {
  /** The introspection endpoint. */
  endpoint: string;
  /** The resource server's client id (HTTP Basic to the endpoint). */
  clientId?: string;
  /** Its secret. */
  clientSecret?: string;
  /**
   * The audience the answer's `aud` must contain when it has one (default:
   * the canonical resource URL).
   */
  audience?: string;
  /** The required `iss`, when the answer carries one. */
  issuer?: string;
  /** The request timeout in milliseconds (default 2 s). */
  timeoutMs?: number;
  /**
   * After the endpoint failed (unreachable, timed out, a 5xx), how long
   * tokens not already verified get 503 with `Retry-After` at once instead
   * of another try, in milliseconds (default 5 s).
   */
  cooldownMs?: number;
}

/**
 * Creates a verifier that POSTs the token to an RFC 7662 endpoint and accepts
 * it when the answer is `active` (and not expired, for this resource). When
 * the endpoint cannot answer, the caller gets 503 (its token may be fine),
 * at once for `cooldownMs` after a failure.
 *
 * @param options The endpoint and credentials.
 * @returns The verifier, for `auth.verifyToken`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { introspectionVerifier, VerifierUnavailableError } from "@anubis/transport-http";
 * const verify = introspectionVerifier({ endpoint: "http://127.0.0.1:9/introspect", timeoutMs: 500 });
 * // Unreachable: the server's fault, not the token's (503 to the caller).
 * const error = await verify("t", new Request("http://localhost/mcp"), "http://localhost/mcp")
 *   .then(() => undefined, (error) => error);
 * assert.ok(error instanceof VerifierUnavailableError);
 * assert.ok(error.retryAfterMs >= 1000);
 * ```
 */
export function introspectionVerifier(options: IntrospectionOptions): TokenVerifier {
  const headers: Record<string, string> = {
    "content-type": "application/x-www-form-urlencoded",
    accept: "application/json",
  };
  if (options.clientId !== undefined) {
    headers.authorization = `Basic ${
      btoa(
        `${encodeURIComponent(options.clientId)}:${encodeURIComponent(options.clientSecret ?? "")}`,
      )
    }`;
  }
  const cooldownMs = options.cooldownMs ?? 5_000;
  let failedAt = -Infinity;
  const unavailable = () =>
    new VerifierUnavailableError(
      "the token could not be introspected",
      Math.max(1000, cooldownMs - (Date.now() - failedAt)),
    );
  return async (token, _request, resource) => {
    if (Date.now() - failedAt < cooldownMs) throw unavailable();
    let answer: Record<string, unknown>;
    let response: Response;
    try {
      response = await fetch(options.endpoint, {
        method: "POST",
        headers,
        body: new URLSearchParams({ token, token_type_hint: "access_token" }),
        signal: AbortSignal.timeout(options.timeoutMs ?? 2_000),
      });
    } catch {
      failedAt = Date.now();
      throw unavailable();
    }
    if (response.status >= 500) {
      await response.body?.cancel();
      failedAt = Date.now();
      throw unavailable();
    }
    try {
      if (!response.ok) throw new Error();
      answer = await response.json();
    } catch {
      await response.body?.cancel().catch(() => {});
      throw new Error("the token could not be introspected");
    }
    if (answer.active !== true) throw new Error("the token is not active");
    if (typeof answer.exp === "number" && answer.exp * 1000 <= Date.now()) {
      throw new Error("the token has expired");
    }
    if (options.issuer !== undefined && answer.iss !== undefined && answer.iss !== options.issuer) {
      throw new Error("the token's iss claim is not accepted");
    }
    const audience = options.audience ?? resource;
    if (answer.aud !== undefined) {
      const list = Array.isArray(answer.aud) ? answer.aud : [answer.aud];
      if (!list.includes(audience)) throw new Error("the token's aud claim is not accepted");
    }
    return authInfoOf(answer);
  };
}
