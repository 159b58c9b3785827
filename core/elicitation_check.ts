/**
 * The check of an elicitation answer beyond the result schema: accepted form
 * content must match the `requestedSchema` the server sent. Compiled once per
 * schema object.
 *
 * @module
 */

import { compileValidator, type Validation, type Validator } from "./json_schema.ts";
import type { ElicitParams, ElicitResult } from "./types.ts";

/** Checks a client's answer beyond its result schema. */
export type AnswerCheck = (answer: unknown) => Validation | Promise<Validation>;

/** What a check returns for an answer it has nothing against. */
export const ACCEPTED: Validation = { ok: true, value: undefined };

// One compiled validator per `requestedSchema` object.
const requestedSchemas = new WeakMap<object, Validator>();

/**
 * The check of a form elicitation's answer: accepted content must match the
 * `requestedSchema` (2025-11-25: servers SHOULD validate elicitation responses).
 */
export function contentCheck(params: ElicitParams): AnswerCheck | undefined {
  const schema = params.mode === "url" ? undefined : params.requestedSchema;
  if (typeof schema !== "object" || schema === null) return undefined;
  let validate = requestedSchemas.get(schema);
  if (!validate) requestedSchemas.set(schema, validate = compileValidator(schema));
  return (answer) => {
    const { action, content } = answer as ElicitResult;
    return action === "accept" ? validate(content ?? {}) : ACCEPTED;
  };
}
