/**
 * A {@link TokenVerifier} for JWT access tokens (RFC 9068) on `jose`, loaded
 * only when the first token is checked.
 *
 * @module
 */

import { logger } from "@anubis/core";
import { type AuthInfo, type TokenVerifier, VerifierUnavailableError } from "./auth.ts";

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
   * on an unknown `kid` at most once per `jwksCooldownMs`. When a fetch
   * fails (unreachable, timed out, not a key set) the keys fetched before are
   * kept and used, and it is not fetched again until `jwksCooldownMs` has
   * passed; a token no kept key can check meanwhile gets 503 with
   * `Retry-After` at once, not a wait.
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
  /**
   * How long fetched keys are used before they are fetched again, in
   * milliseconds (default 10 minutes); while the endpoint fails they are
   * used longer.
   */
  jwksCacheMs?: number;
  /**
   * The least time between two JWKS fetches, in milliseconds (default 30 s),
   * after a success as after a failure.
   */
  jwksCooldownMs?: number;
  /** The JWKS fetch timeout, body included, in milliseconds (default 2 s). */
  jwksTimeoutMs?: number;
}

/** How long a verifier that could not load `jose` or its keys waits before trying again. */
const LOAD_RETRY_MS = 30_000;

/**
 * Whether an error of `jwtVerify` is the token's: jose's own errors (coded
 * `ERR_J…`), except those about the server's keys. Anything else (a key the
 * platform cannot import, a defect) is the server's.
 */
function tokenFault(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^ERR_J/.test(code) && code !== "ERR_JWKS_INVALID" &&
    code !== "ERR_JWK_INVALID";
}

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
  if (typeof claims.iss === "string") info.issuer = claims.iss;
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
  let loggedAt = -Infinity;
  /**
   * A failure of the server's own (the module, its keys), not the token's:
   * logged with its cause (at most once per LOAD_RETRY_MS), answered 503
   * with no path or URL.
   */
  const unusable = (what: string, error: unknown): VerifierUnavailableError => {
    const now = Date.now();
    if (now - loggedAt >= LOAD_RETRY_MS) {
      loggedAt = now;
      logger.error("auth.verifier_failed", `the JWT verifier failed: ${what}`, { error });
    }
    return new VerifierUnavailableError("the token verifier is unavailable", LOAD_RETRY_MS);
  };
  let loaded: Promise<{ jose: Jose; keys: KeyGetter }> | undefined;
  /** When loading last failed; Infinity while it has not (`now - Infinity` < anything). */
  let failedAt = Infinity;
  const load = () => {
    // Kept once loaded; after a failure, tried again once LOAD_RETRY_MS passed.
    if (loaded !== undefined && Date.now() - failedAt < LOAD_RETRY_MS) return loaded;
    failedAt = Infinity;
    // A literal dynamic import: packers see `jose` (a declared dependency of
    // the package), and a server that never checks a token never loads it.
    return loaded = import("jose").then((jose) => ({
      jose,
      keys: options.jwksUrl !== undefined
        ? new RemoteKeys(jose, options.jwksUrl, {
          cacheMs: options.jwksCacheMs ?? 600_000,
          cooldownMs: options.jwksCooldownMs ?? 30_000,
          timeoutMs: options.jwksTimeoutMs ?? 2_000,
        }).getKey
        : jose.createLocalJWKSet({ keys: options.keys as never }),
    })).catch((error) => {
      failedAt = Date.now();
      throw unusable("jose or its keys could not be loaded", error);
    });
  };
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
      if (error instanceof VerifierUnavailableError) throw error;
      if (!tokenFault(error)) throw unusable("the keys could not be used", error);
      throw new Error(describe(error));
    }
  };
}

type Jose = typeof import("jose");
/** What `jwtVerify` takes as keys: a function of the token's header. */
type KeyGetter = ReturnType<Jose["createLocalJWKSet"]>;

/** The largest JWKS document read, in bytes. */
const MAX_JWKS_BYTES = 1024 * 1024;

/**
 * A remote key set with a timeout, a cooldown after every fetch (failed or
 * not), and the last good keys kept while the endpoint fails. jose's own
 * remote set fetches again on every token while the endpoint is down (it
 * cools down only after a success), each fetch up to its timeout.
 */
class RemoteKeys {
  readonly #jose: Jose;
  readonly #url: string;
  readonly #cacheMs: number;
  readonly #cooldownMs: number;
  readonly #timeoutMs: number;
  /** The last good keys. */
  #local: KeyGetter | undefined;
  /** When they were fetched. */
  #fetchedAt = -Infinity;
  /** When the last fetch started. */
  #attemptAt = -Infinity;
  /** Whether the last fetch failed. */
  #failed = false;
  #pending: Promise<void> | undefined;

  constructor(
    jose: Jose,
    url: string,
    times: { cacheMs: number; cooldownMs: number; timeoutMs: number },
  ) {
    this.#jose = jose;
    this.#url = new URL(url).href;
    this.#cacheMs = times.cacheMs;
    this.#cooldownMs = times.cooldownMs;
    this.#timeoutMs = times.timeoutMs;
  }

  /** The key of a token's header, for `jwtVerify`. */
  readonly getKey: KeyGetter = (async (header, token) => {
    if (this.#local === undefined || Date.now() - this.#fetchedAt >= this.#cacheMs) {
      await this.#refresh();
    }
    const local = this.#local;
    if (local === undefined) throw this.#unavailable();
    try {
      return await local(header, token);
    } catch (error) {
      if ((error as { code?: string }).code !== "ERR_JWKS_NO_MATCHING_KEY") throw error;
      // An unknown kid: the keys may have rotated since.
      await this.#refresh();
      if (this.#local !== local) return await this.#local!(header, token);
      // The endpoint is down: the token may be signed with a key not seen yet.
      if (this.#failed) throw this.#unavailable();
      throw error;
    }
  }) as KeyGetter;

  /** Fetches the keys unless a fetch is under way or the last one is too recent. */
  #refresh(): Promise<void> {
    if (this.#pending !== undefined) return this.#pending;
    const now = Date.now();
    if (now - this.#attemptAt < this.#cooldownMs) return Promise.resolve();
    this.#attemptAt = now;
    return this.#pending = this.#fetch().then(
      (keys) => {
        this.#local = keys;
        this.#fetchedAt = Date.now();
        this.#failed = false;
      },
      (error) => {
        this.#failed = true;
        logger.warn(
          "auth.jwks_failed",
          `the JWKS could not be fetched (${
            error instanceof Error ? error.message : String(error)
          }); ${
            this.#local === undefined ? "no keys yet" : "the keys fetched before are kept"
          }, next try in ${this.#cooldownMs} ms`,
          { url: this.#url },
        );
      },
    ).finally(() => this.#pending = undefined);
  }

  async #fetch(): Promise<KeyGetter> {
    const signal = AbortSignal.timeout(this.#timeoutMs);
    const response = await fetch(this.#url, {
      headers: { accept: "application/json, application/jwk-set+json" },
      redirect: "manual",
      signal,
    });
    if (response.status !== 200) {
      await response.body?.cancel();
      throw new Error(`HTTP ${response.status}`);
    }
    const announced = Number(response.headers.get("content-length") ?? 0);
    if (announced > MAX_JWKS_BYTES) {
      await response.body?.cancel();
      throw new Error(`larger than ${MAX_JWKS_BYTES} bytes`);
    }
    const chunks: Uint8Array[] = [];
    let size = 0;
    for await (const chunk of response.body ?? []) {
      size += chunk.byteLength;
      if (size > MAX_JWKS_BYTES) throw new Error(`larger than ${MAX_JWKS_BYTES} bytes`);
      chunks.push(chunk);
    }
    const bytes = new Uint8Array(size);
    let at = 0;
    for (const chunk of chunks) bytes.set(chunk, (at += chunk.byteLength) - chunk.byteLength);
    return this.#jose.createLocalJWKSet(JSON.parse(new TextDecoder().decode(bytes)));
  }

  #unavailable(): VerifierUnavailableError {
    const wait = this.#cooldownMs - (Date.now() - this.#attemptAt);
    return new VerifierUnavailableError("the signing keys are unavailable", Math.max(1000, wait));
  }
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
