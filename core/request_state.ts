/**
 * The integrity-protected `requestState` of stateless multi round-trip
 * requests: HMAC-SHA256 signed (not encrypted), bound to the method, the
 * target and a digest of the arguments (digest §4.5.3), with an expiry.
 *
 * @module
 */

import { canonicalJson } from "./_canonical_json.ts";
import { ErrorCode, McpError } from "./errors.ts";
import { logger } from "./logger.ts";

/**
 * What a `requestState` carries between rounds.
 *
 * @example
 * ```ts
 * import { RequestStateCodec, type RequestStatePayload } from "@anubis/core";
 * const payload: RequestStatePayload = {
 *   method: "tools/call",
 *   target: "greet",
 *   argumentsDigest: await RequestStateCodec.argumentsDigest({ name: "Ada" }),
 *   answers: {},
 *   round: 1,
 * };
 * ```
 */
export interface RequestStatePayload {
  /** The method the state belongs to. */
  method: string;
  /** The tool or prompt name, or the resource URI. */
  target: string;
  /**
   * {@link RequestStateCodec.argumentsDigest} of the request's arguments
   * (`tools/call` and `prompts/get`); `""` or absent when the request has none.
   */
  argumentsDigest?: string;
  /** The input responses of every earlier round, by key. */
  answers: Record<string, unknown>;
  /** How many rounds asked for input so far. */
  round: number;
  /**
   * The principal of the caller the state was sealed for (`principalOf` its
   * auth info); absent for an unauthenticated caller. Only that principal's
   * retry opens it.
   */
  principal?: string;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function toBase64Url(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i]);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replaceAll("=", "");
}

function fromBase64Url(text: string): Uint8Array {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) throw new TypeError("not base64url");
  const binary = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/**
 * A `requestState` signing secret: text (UTF-8) or raw bytes.
 *
 * @example
 * ```ts
 * import type { RequestStateSecret } from "@anubis/core";
 * const secret: RequestStateSecret = crypto.getRandomValues(new Uint8Array(32));
 * ```
 */
export type RequestStateSecret = string | Uint8Array;

/**
 * The secrets a codec uses: `secret` signs new states, and `secret` or any of
 * `previousSecrets` opens one, so a state sealed just before a rotation still
 * opens after it.
 *
 * @example
 * ```ts
 * import type { RequestStateKeys } from "@anubis/core";
 * const keys: RequestStateKeys = {
 *   secret: "the new secret, at least 32 characters long",
 *   previousSecrets: ["the old secret, still accepted for a while"],
 * };
 * ```
 */
export interface RequestStateKeys {
  /** Signs new states (and opens them). */
  secret: RequestStateSecret;
  /** Open states only: the secrets retired by a rotation still in its window. */
  previousSecrets?: readonly RequestStateSecret[];
}

/**
 * Options of a {@link RequestStateCodec}.
 *
 * @example
 * ```ts
 * import type { RequestStateOptions } from "@anubis/core";
 * const options: RequestStateOptions = { secret: "a shared secret of at least 32 characters!!" };
 * ```
 */
export interface RequestStateOptions {
  /** The signing secret (random per process when omitted). */
  secret?: RequestStateSecret;
  /** Secrets that still open states (a rotation's previous secret). */
  previousSecrets?: readonly RequestStateSecret[];
  /** How long a state stays valid, in ms (default 10 minutes). */
  ttlMs?: number;
}

/** The fewest ms between two reloads a state no known key opens may cause. */
const RELOAD_INTERVAL_MS = 1_000;

function importKey(secret: RequestStateSecret): Promise<CryptoKey> {
  const raw = typeof secret === "string" ? encoder.encode(secret) : secret;
  return crypto.subtle.importKey(
    "raw",
    raw as Uint8Array<ArrayBuffer>,
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign", "verify"],
  );
}

/**
 * Signs and verifies `requestState` values. Every instance that may receive a
 * retry must share the secret; without one a random per-process secret is
 * used, which is right for a single process. Instances sharing a KV database
 * share one with no configuration (`SharedRequestStateKeys` of
 * `@anubis/core/kv`, which `anubis serve --http` uses), or are given one
 * ({@link RequestStateCodec.useKeys}).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { RequestStateCodec } from "@anubis/core";
 * const codec = new RequestStateCodec({ secret: "a shared secret of at least 32 characters!!" });
 * const argumentsDigest = await RequestStateCodec.argumentsDigest({ name: "Ada" });
 * const state = await codec.seal({
 *   method: "tools/call",
 *   target: "greet",
 *   argumentsDigest,
 *   answers: {},
 *   round: 1,
 * });
 * assert.equal((await codec.open(state, "tools/call", "greet", argumentsDigest)).round, 1);
 * ```
 */
export class RequestStateCodec {
  #keys: Promise<CryptoKey[]>;
  #ttlMs: number;
  #given: boolean;
  #reload?: () => Promise<RequestStateKeys>;
  #reloadedAt = 0;

  /**
   * Creates a codec.
   *
   * @param options `secret` (random when omitted), `previousSecrets` and
   * `ttlMs` (how long a state stays valid, default 10 minutes).
   */
  constructor(options: RequestStateOptions = {}) {
    this.#given = options.secret !== undefined;
    this.#keys = RequestStateCodec.#import({
      secret: options.secret ?? crypto.getRandomValues(new Uint8Array(32)),
      previousSecrets: options.previousSecrets,
    });
    this.#ttlMs = options.ttlMs ?? 600_000;
  }

  static #import(keys: RequestStateKeys): Promise<CryptoKey[]> {
    return Promise.all([keys.secret, ...keys.previousSecrets ?? []].map(importKey));
  }

  /**
   * Whether a secret was set (in the definition's `requestState.secret` or by
   * {@link useKeys}), rather than the random one of this process.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { RequestStateCodec } from "@anubis/core";
   * assert.equal(new RequestStateCodec().hasSecret, false);
   * assert.equal(new RequestStateCodec({ secret: "x".repeat(32) }).hasSecret, true);
   * ```
   */
  get hasSecret(): boolean {
    return this.#given;
  }

  /**
   * The state lifetime in ms: how long after a rotation a previous secret
   * must still open states.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { RequestStateCodec } from "@anubis/core";
   * assert.equal(new RequestStateCodec().ttlMs, 600_000);
   * ```
   */
  get ttlMs(): number {
    return this.#ttlMs;
  }

  /**
   * Switches to other secrets (from a flag, or shared through a database);
   * states sealed before with a secret not among them no longer open.
   *
   * @param keys The signing secret and the previous ones still accepted.
   * @param reload Fetches the keys again when a state opens with none of
   *   them (another instance rotated first); called at most once a second.
   * @returns Resolves once the keys are in use.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { McpError, RequestStateCodec } from "@anubis/core";
   * const payload = { method: "tools/call", target: "t", answers: {}, round: 1 };
   * const a = new RequestStateCodec();
   * const b = new RequestStateCodec();
   * await a.useKeys({ secret: "old secret, thirty-two characters!" });
   * const early = await a.seal(payload);
   * // A rotation: the new secret signs, the old one still opens.
   * const rotated = { secret: "new secret, thirty-two characters!", previousSecrets: ["old secret, thirty-two characters!"] };
   * await a.useKeys(rotated);
   * await b.useKeys(rotated);
   * assert.equal((await b.open(early, "tools/call", "t")).round, 1);
   * assert.equal((await b.open(await a.seal(payload), "tools/call", "t")).round, 1);
   * await b.useKeys({ secret: "new secret, thirty-two characters!" });
   * await assert.rejects(b.open(early, "tools/call", "t"), McpError);
   * ```
   */
  async useKeys(keys: RequestStateKeys, reload?: () => Promise<RequestStateKeys>): Promise<void> {
    const imported = RequestStateCodec.#import(keys);
    await imported;
    this.#keys = imported;
    this.#given = true;
    this.#reload = reload;
  }

  /**
   * The digest that binds a state to a request's arguments: SHA-256 of their
   * JSON with sorted keys (base64url), so a retry that resends equal
   * arguments matches whatever their key order. `undefined` and `{}` are
   * alike (handlers receive `{}` for both).
   *
   * @param args The request's `arguments`.
   * @returns The digest.
   *
   * @example
   * ```ts
   * import { RequestStateCodec } from "@anubis/core";
   * import assert from "node:assert/strict";
   * const digest = await RequestStateCodec.argumentsDigest({ a: 1, b: [2] });
   * assert.equal(digest === await RequestStateCodec.argumentsDigest({ b: [2], a: 1 }), true);
   * assert.equal(await RequestStateCodec.argumentsDigest(undefined) === await RequestStateCodec.argumentsDigest({}), true);
   * ```
   */
  static async argumentsDigest(args: unknown): Promise<string> {
    const text = canonicalJson(args ?? {});
    return toBase64Url(
      new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text))),
    );
  }

  /**
   * Signs a payload.
   *
   * @param payload What to carry to the next round.
   * @returns The opaque state string.
   *
   * @example
   * ```ts
   * import { RequestStateCodec } from "@anubis/core";
   * import assert from "node:assert/strict";
   * const codec = new RequestStateCodec();
   * const state = await codec.seal({
   *   method: "prompts/get",
   *   target: "plan",
   *   argumentsDigest: await RequestStateCodec.argumentsDigest({}),
   *   answers: { elicitation_1: { action: "decline" } },
   *   round: 1,
   * });
   * assert.equal(state.split(".").length, 2);
   * ```
   */
  async seal(payload: RequestStatePayload): Promise<string> {
    const body = encoder.encode(
      JSON.stringify({ ...payload, expiresAt: Date.now() + this.#ttlMs }),
    );
    const [key] = await this.#keys;
    const signature = new Uint8Array(await crypto.subtle.sign("HMAC", key, body));
    return `${toBase64Url(body)}.${toBase64Url(signature)}`;
  }

  /**
   * Verifies a state and returns its payload.
   *
   * @param state The state the client echoed.
   * @param method The method of the retry.
   * @param target The tool or prompt name, or resource URI, of the retry.
   * @param argumentsDigest {@link RequestStateCodec.argumentsDigest} of the
   * retry's arguments (`""` for a method without arguments).
   * @param principal The retrying caller's principal (`undefined`: none).
   * @returns The payload.
   * @throws {McpError} `-32602` when the state was tampered with, has expired,
   * belongs to another method, target or arguments, or was sealed for
   * another principal (answered as a tampered state: "integrity check failed").
   *
   * @example
   * ```ts
   * import { McpError, RequestStateCodec } from "@anubis/core";
   * import assert from "node:assert/strict";
   * const codec = new RequestStateCodec();
   * const digest = await RequestStateCodec.argumentsDigest({ city: "Oslo" });
   * const payload = { method: "tools/call", target: "forecast", argumentsDigest: digest };
   * const state = await codec.seal({ ...payload, answers: {}, round: 2 });
   * assert.equal((await codec.open(state, "tools/call", "forecast", digest)).round, 2);
   * const other = await RequestStateCodec.argumentsDigest({ city: "Rome" });
   * await codec.open(state, "tools/call", "forecast", other).catch((e: McpError) => {
   *   assert.equal(e.code, -32602);
   * });
   * ```
   */
  async open(
    state: string,
    method: string,
    target: string,
    argumentsDigest = "",
    principal?: string,
  ): Promise<RequestStatePayload> {
    const [bodyText, signatureText, extra] = state.split(".");
    let body: Uint8Array, signature: Uint8Array;
    try {
      if (extra !== undefined || !bodyText || !signatureText) throw new TypeError("shape");
      body = fromBase64Url(bodyText);
      signature = fromBase64Url(signatureText);
    } catch {
      throw integrityError();
    }
    if (!await this.#verify(signature, body)) throw integrityError();
    const payload = JSON.parse(decoder.decode(body)) as RequestStatePayload & { expiresAt: number };
    // Another caller's state is refused like a forged one: nothing about it is told.
    if (payload.principal !== principal) throw integrityError();
    if (
      payload.method !== method || payload.target !== target ||
      (payload.argumentsDigest ?? "") !== argumentsDigest
    ) {
      throw new McpError(ErrorCode.INVALID_PARAMS, "requestState belongs to another request");
    }
    if (!(payload.expiresAt > Date.now())) {
      throw new McpError(ErrorCode.INVALID_PARAMS, "requestState has expired");
    }
    return {
      method: payload.method,
      target: payload.target,
      argumentsDigest: payload.argumentsDigest ?? "",
      answers: payload.answers ?? {},
      round: payload.round ?? 0,
      ...(principal === undefined ? {} : { principal }),
    };
  }

  /** Whether a known key signed `body`; with none, the keys are reloaded (rate-limited). */
  async #verify(signature: Uint8Array, body: Uint8Array): Promise<boolean> {
    if (await verifyWithAny(await this.#keys, signature, body)) return true;
    const reload = this.#reload;
    if (!reload || Date.now() - this.#reloadedAt < RELOAD_INTERVAL_MS) return false;
    this.#reloadedAt = Date.now();
    try {
      const keys = RequestStateCodec.#import(await reload());
      await keys;
      this.#keys = keys;
    } catch (error) {
      logger.error("store.failed", "reloading the requestState keys failed", { error });
      return false;
    }
    return await verifyWithAny(await this.#keys, signature, body);
  }
}

async function verifyWithAny(
  keys: CryptoKey[],
  signature: Uint8Array,
  body: Uint8Array,
): Promise<boolean> {
  for (const key of keys) {
    const valid = await crypto.subtle.verify(
      "HMAC",
      key,
      signature as Uint8Array<ArrayBuffer>,
      body as Uint8Array<ArrayBuffer>,
    );
    if (valid) return true;
  }
  return false;
}

function integrityError(): McpError {
  return new McpError(ErrorCode.INVALID_PARAMS, "requestState integrity check failed");
}
