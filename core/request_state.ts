/**
 * The integrity-protected `requestState` of stateless multi round-trip
 * requests: HMAC-SHA256 signed (not encrypted), bound to the method, the
 * target and a digest of the arguments (digest §4.5.3), with an expiry.
 *
 * @module
 */

import { canonicalJson } from "./canonical_json.ts";
import { ErrorCode, McpError } from "./errors.ts";

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
 * Signs and verifies `requestState` values. Every instance that may receive a
 * retry must share the secret; without one a random per-process secret is
 * used, which is right for a single process.
 *
 * @example
 * ```ts
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
 * console.log((await codec.open(state, "tools/call", "greet", argumentsDigest)).round); // 1
 * ```
 */
export class RequestStateCodec {
  #key: Promise<CryptoKey>;
  #ttlMs: number;

  /**
   * Creates a codec.
   *
   * @param options `secret` (text or bytes; random when omitted) and `ttlMs`
   * (how long a state stays valid, default 10 minutes).
   */
  constructor(options: { secret?: string | Uint8Array; ttlMs?: number } = {}) {
    const raw = typeof options.secret === "string"
      ? encoder.encode(options.secret)
      : options.secret ?? crypto.getRandomValues(new Uint8Array(32));
    this.#key = crypto.subtle.importKey(
      "raw",
      raw as Uint8Array<ArrayBuffer>,
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign", "verify"],
    );
    this.#ttlMs = options.ttlMs ?? 600_000;
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
   * const digest = await RequestStateCodec.argumentsDigest({ a: 1, b: [2] });
   * console.log(digest === await RequestStateCodec.argumentsDigest({ b: [2], a: 1 })); // true
   * console.log(await RequestStateCodec.argumentsDigest(undefined) === await RequestStateCodec.argumentsDigest({})); // true
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
   * const codec = new RequestStateCodec();
   * const state = await codec.seal({
   *   method: "prompts/get",
   *   target: "plan",
   *   argumentsDigest: await RequestStateCodec.argumentsDigest({}),
   *   answers: { elicitation_1: { action: "decline" } },
   *   round: 1,
   * });
   * console.log(state.split(".").length); // 2
   * ```
   */
  async seal(payload: RequestStatePayload): Promise<string> {
    const body = encoder.encode(
      JSON.stringify({ ...payload, expiresAt: Date.now() + this.#ttlMs }),
    );
    const signature = new Uint8Array(await crypto.subtle.sign("HMAC", await this.#key, body));
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
   * @returns The payload.
   * @throws {McpError} `-32602` when the state was tampered with, has expired,
   * or belongs to another method, target or arguments.
   *
   * @example
   * ```ts
   * import { McpError, RequestStateCodec } from "@anubis/core";
   * const codec = new RequestStateCodec();
   * const digest = await RequestStateCodec.argumentsDigest({ city: "Oslo" });
   * const payload = { method: "tools/call", target: "forecast", argumentsDigest: digest };
   * const state = await codec.seal({ ...payload, answers: {}, round: 2 });
   * console.log((await codec.open(state, "tools/call", "forecast", digest)).round); // 2
   * const other = await RequestStateCodec.argumentsDigest({ city: "Rome" });
   * await codec.open(state, "tools/call", "forecast", other).catch((e: McpError) => {
   *   console.log(e.code); // -32602
   * });
   * ```
   */
  async open(
    state: string,
    method: string,
    target: string,
    argumentsDigest = "",
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
    const valid = await crypto.subtle.verify(
      "HMAC",
      await this.#key,
      signature as Uint8Array<ArrayBuffer>,
      body as Uint8Array<ArrayBuffer>,
    );
    if (!valid) throw integrityError();
    const payload = JSON.parse(decoder.decode(body)) as RequestStatePayload & { expiresAt: number };
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
    };
  }
}

function integrityError(): McpError {
  return new McpError(ErrorCode.INVALID_PARAMS, "requestState integrity check failed");
}
