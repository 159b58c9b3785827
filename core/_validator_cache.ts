/**
 * A small LRU of compiled validators keyed by a schema's canonical JSON, for
 * schemas written inline (a fresh but equal object on every call), such as an
 * elicitation's `requestedSchema`.
 *
 * @module
 */

import { canonicalJson } from "./_canonical_json.ts";
import { compileValidator, type JsonSchema, type Validator } from "./json_schema.ts";

/**
 * Compiled validators by canonical JSON, the least recently used dropped past
 * `limit`. A validator owns what compiled it (see `compileValidator`), so a
 * dropped one is freed.
 *
 * @example
 * ```ts
 * import { ValidatorCache } from "./_validator_cache.ts";
 * import assert from "node:assert/strict";
 * const cache = new ValidatorCache(2);
 * const a = cache.get({ type: "string" });
 * assert.equal(cache.get({ type: "string" }) === a, true);
 * assert.equal(cache.compiles, 1);
 * ```
 */
export class ValidatorCache {
  readonly #limit: number;
  readonly #compile: (schema: JsonSchema) => Validator;
  // A Map iterates in insertion order: a hit is moved to the end, the first is the oldest.
  readonly #validators = new Map<string, Validator>();
  #compiles = 0;

  /**
   * Creates the cache.
   *
   * @param limit How many validators it keeps.
   * @param compile Compiles a schema (default `compileValidator`).
   */
  constructor(limit: number, compile: (schema: JsonSchema) => Validator = compileValidator) {
    this.#limit = limit;
    this.#compile = compile;
  }

  /** How many schemas it compiled so far (misses). */
  get compiles(): number {
    return this.#compiles;
  }

  /** How many validators it holds. */
  get size(): number {
    return this.#validators.size;
  }

  /**
   * The validator of a schema, compiled on its first use.
   *
   * @param schema The JSON Schema.
   * @returns Its validator.
   */
  get(schema: JsonSchema): Validator {
    const key = canonicalJson(schema);
    let validator = this.#validators.get(key);
    if (validator) {
      this.#validators.delete(key);
    } else {
      validator = this.#compile(schema);
      this.#compiles++;
      if (this.#validators.size >= this.#limit) {
        this.#validators.delete(this.#validators.keys().next().value!);
      }
    }
    this.#validators.set(key, validator);
    return validator;
  }
}
