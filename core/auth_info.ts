/**
 * The caller's authentication facts as a transport establishes them (the
 * HTTP transport's `auth` option, or a middleware of the user's), and the
 * principal they name. Core only reads them: what the facts mean (a bearer
 * token, a client certificate) is the transport's business.
 *
 * @module
 */

/**
 * What a verified caller is: handlers see it as `frame.auth` (and
 * `frame.context.authInfo`). A middleware that attaches its own `authInfo`
 * gives it this shape.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { AuthInfo } from "@anubis/core";
 * const info: AuthInfo = { subject: "ada", scopes: ["tools:read"], expiresAt: 2_000_000_000 };
 * assert.ok(info.scopes.includes("tools:read"));
 * ```
 */
export interface AuthInfo {
  /** The token's subject (`sub`): with its issuer, the principal. */
  subject?: string;
  /**
   * The token's issuer (`iss`): qualifies the principal, so two issuers'
   * subjects of the same name are two principals.
   */
  issuer?: string;
  /** The OAuth client the token was issued to (`client_id` or `azp`). */
  clientId?: string;
  /** The granted scopes. */
  scopes: readonly string[];
  /** Expiry, in seconds since the epoch. */
  expiresAt?: number;
  /** Every claim of the token (or of the introspection answer). */
  claims?: Readonly<Record<string, unknown>>;
}

/**
 * The principal of a caller; `undefined` for an unauthenticated one. What a
 * session, a `requestState`, a task and a rate limit are bound to.
 *
 * A subject is qualified by its issuer (`<issuer>#<subject>`; the subject
 * alone without one). A caller with no subject, only a client id, gets a
 * principal of its own namespace, `client:<issuer>#<clientId>`, so a client
 * id never names a subject's principal: a token without `sub` and
 * `client_id: "ada"` is not `ada`. A caller with neither has none (the HTTP
 * transport refuses such a token).
 *
 * @param info The caller's {@link AuthInfo} (or whatever a middleware attached).
 * @returns The principal.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { principalOf } from "@anubis/core/engine";
 * assert.equal(principalOf({ subject: "ada", clientId: "app", scopes: [] }), "ada");
 * assert.equal(
 *   principalOf({ subject: "ada", issuer: "https://as.example", scopes: [] }),
 *   "https://as.example#ada",
 * );
 * assert.equal(
 *   principalOf({ clientId: "ada", issuer: "https://as.example", scopes: [] }),
 *   "client:https://as.example#ada",
 * );
 * assert.equal(principalOf({ clientId: "app", scopes: [] }), "client:#app");
 * assert.equal(principalOf({ scopes: [] }), undefined);
 * assert.equal(principalOf(undefined), undefined);
 * ```
 */
export function principalOf(info: unknown): string | undefined {
  if (info === null || typeof info !== "object") return undefined;
  const caller = info as Partial<AuthInfo>;
  const issuer = typeof caller.issuer === "string" ? caller.issuer : undefined;
  if (typeof caller.subject === "string") {
    return issuer === undefined ? caller.subject : `${issuer}#${caller.subject}`;
  }
  if (typeof caller.clientId === "string") return `client:${issuer ?? ""}#${caller.clientId}`;
  return undefined;
}
