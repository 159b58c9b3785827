/**
 * A {@link TokenVerifier} for JWT access tokens (RFC 9068) on `jose`, loaded
 * only when the first token is checked.
 *
 * @module
 */

import type { AuthInfo, TokenVerifier } from "./auth.ts";

/**
 * Options of {@link jwtVerifier}: where the keys come from and what the token
 * must say.
 *
 * @example
 * ```ts
 * import type { JwtVerifierOptions } from "@anubis/transport-http";
 * const options: JwtVerifierOptions = {
 *   issuer: "https://auth.example.com",
 *   jwksUrl: "https://auth.example.com/.well-known/jwks.json",
 * };
 * if (options.algorithms !== undefined) throw new Error("defaults apply");
 * ```
 */
export interface JwtVerifierOptions {
  /** The required `iss`. */
  issuer: string;
  /**
   * The JWKS endpoint: fetched once, cached (`jwksCacheMs`), fetched again
   * on an unknown `kid` at most once per `jwksCooldownMs`.
   */
  jwksUrl?: string;
  /** Static public keys (JWKs) instead of a JWKS URL. */
  keys?: readonly Record<string, unknown>[];
  /**
   * The required `aud` (one of them). Default: the server's canonical
   * resource URL, so a token minted for another resource is refused.
   */
  audience?: string | readonly string[];
  /**
   * The accepted signing algorithms (default RS256, RS384, RS512, PS256,
   * PS384, PS512, ES256, ES384, ES512, EdDSA); `none` is never accepted.
   */
  algorithms?: readonly string[];
  /** Allowed clock skew for `exp`/`nbf`/`iat`, in seconds (default 30). */
  clockToleranceSeconds?: number;
  /** How long fetched keys are trusted, in milliseconds (default 10 minutes). */
  jwksCacheMs?: number;
  /** The least time between two JWKS fetches, in milliseconds (default 30 s). */
  jwksCooldownMs?: number;
  /** The JWKS fetch timeout, in milliseconds (default 5 s). */
  jwksTimeoutMs?: number;
}

const JOSE: string = "jose";

const DEFAULT_ALGORITHMS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
];

/** The scopes of a claims set: `scope` (space-separated) or `scp` (array or string). */
function scopesOf(claims: Record<string, unknown>): string[] {
  const scope = claims.scope ?? claims.scp;
  if (typeof scope === "string") return scope.split(" ").filter((s) => s.length > 0);
  if (Array.isArray(scope)) return scope.filter((s): s is string => typeof s === "string");
  return [];
}

/**
 * The {@link AuthInfo} of verified claims (JWT or introspection answer).
 *
 * @param claims The claims.
 * @returns The caller.
 */
export function authInfoOf(claims: Record<string, unknown>): AuthInfo {
  const info: AuthInfo = { scopes: scopesOf(claims), claims };
  if (typeof claims.sub === "string") info.subject = claims.sub;
  const client = claims.client_id ?? claims.azp;
  if (typeof client === "string") info.clientId = client;
  if (typeof claims.exp === "number") info.expiresAt = claims.exp;
  return info;
}

/**
 * Creates a JWT verifier: signature against the JWKS or static keys, `iss`,
 * `aud` (default: the resource URL), `exp`/`nbf` with clock skew, and an
 * algorithm allow-list that never contains `none`.
 *
 * @param options Keys and required claims.
 * @returns The verifier, for `auth.verifyToken`.
 *
 * @example
 * ```ts
 * import { jwtVerifier } from "@anubis/transport-http";
 * const verify = jwtVerifier({ issuer: "https://auth.example.com", keys: [] });
 * const refused = await verify("not-a-jwt", new Request("http://localhost/mcp"), "http://localhost/mcp")
 *   .then(() => false, () => true);
 * if (!refused) throw new Error("a malformed token must be refused");
 * ```
 */
export function jwtVerifier(options: JwtVerifierOptions): TokenVerifier {
  if (options.jwksUrl === undefined && options.keys === undefined) {
    throw new TypeError("jwtVerifier needs jwksUrl or keys");
  }
  const algorithms = (options.algorithms ?? DEFAULT_ALGORITHMS).filter((a) =>
    a.toLowerCase() !== "none"
  );
  if (algorithms.length === 0) throw new TypeError("jwtVerifier needs a signing algorithm");
  type Jose = typeof import("jose");
  let loaded: Promise<{ jose: Jose; keys: Parameters<Jose["jwtVerify"]>[1] }> | undefined;
  const load = () =>
    // A computed specifier, so `jose` is fetched only when a token is first
    // checked, not when a server that never uses auth starts.
    loaded ??= (import(JOSE) as Promise<Jose>).then((jose) => ({
      jose,
      keys: options.jwksUrl !== undefined
        ? jose.createRemoteJWKSet(new URL(options.jwksUrl), {
          cacheMaxAge: options.jwksCacheMs ?? 600_000,
          cooldownDuration: options.jwksCooldownMs ?? 30_000,
          timeoutDuration: options.jwksTimeoutMs ?? 5_000,
        })
        : jose.createLocalJWKSet({ keys: options.keys as never }),
    }));
  return async (token, _request, resource) => {
    const { jose, keys } = await load();
    try {
      const { payload } = await jose.jwtVerify(token, keys as never, {
        issuer: options.issuer,
        audience: (options.audience ?? resource) as string | string[],
        algorithms,
        clockTolerance: options.clockToleranceSeconds ?? 30,
        requiredClaims: ["exp"],
      });
      return authInfoOf(payload as Record<string, unknown>);
    } catch (error) {
      throw new Error(describe(error));
    }
  };
}

/** A short, token-free reason for a failed verification. */
function describe(error: unknown): string {
  const code = (error as { code?: string }).code;
  switch (code) {
    case "ERR_JWT_EXPIRED":
      return "the token has expired";
    case "ERR_JWT_CLAIM_VALIDATION_FAILED": {
      const claim = (error as { claim?: string }).claim;
      return claim === "nbf"
        ? "the token is not yet valid"
        : `the token's ${claim} claim is not accepted`;
    }
    case "ERR_JWKS_NO_MATCHING_KEY":
      return "no key matches the token";
    case "ERR_JWS_SIGNATURE_VERIFICATION_FAILED":
      return "the token's signature is invalid";
    case "ERR_JOSE_ALG_NOT_ALLOWED":
      return "the token's algorithm is not allowed";
    default:
      return "the token is invalid";
  }
}
