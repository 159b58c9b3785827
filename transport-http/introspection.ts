/**
 * A {@link TokenVerifier} that asks the authorization server (RFC 7662
 * token introspection), for opaque tokens.
 *
 * @module
 */

import type { TokenVerifier } from "./auth.ts";
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
  /** The request timeout in milliseconds (default 5 s). */
  timeoutMs?: number;
}

/**
 * Creates a verifier that POSTs the token to an RFC 7662 endpoint and accepts
 * it when the answer is `active` (and not expired, for this resource).
 *
 * @param options The endpoint and credentials.
 * @returns The verifier, for `auth.verifyToken`.
 *
 * @example
 * ```ts
 * import { introspectionVerifier } from "@anubis/transport-http";
 * const verify = introspectionVerifier({ endpoint: "http://127.0.0.1:9/introspect", timeoutMs: 500 });
 * const refused = await verify("t", new Request("http://localhost/mcp"), "http://localhost/mcp")
 *   .then(() => false, () => true);
 * if (!refused) throw new Error("an unreachable endpoint refuses the token");
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
  return async (token, _request, resource) => {
    let answer: Record<string, unknown>;
    try {
      const response = await fetch(options.endpoint, {
        method: "POST",
        headers,
        body: new URLSearchParams({ token, token_type_hint: "access_token" }),
        signal: AbortSignal.timeout(options.timeoutMs ?? 5_000),
      });
      if (!response.ok) {
        await response.body?.cancel();
        throw new Error();
      }
      answer = await response.json();
    } catch {
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
