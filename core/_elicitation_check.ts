/**
 * The check of an elicitation answer beyond the result schema: accepted form
 * content must match the `requestedSchema` the server sent. Handlers write
 * that schema inline, so validators are cached by the schema's canonical
 * JSON, in a bounded LRU; nothing is compiled until an `accept` answer is
 * there to check.
 *
 * @module
 */

import type { Validation } from "./json_schema.ts";
import type { ElicitParams, ElicitResult } from "./types.ts";
import { ValidatorCache } from "./_validator_cache.ts";

/**
 * Checks a client's answer to a server-to-client request beyond its result
 * schema.
 */
export type AnswerCheck = (
  params: Record<string, unknown>,
  answer: unknown,
) => Validation | Promise<Validation>;

/** What a check returns for an answer it has nothing against. */
export const ACCEPTED: Validation = { ok: true, value: undefined };

/** The validators of the `requestedSchema`s answered lately, shared by every server. */
export const requestedSchemas: ValidatorCache = new ValidatorCache(64);

/**
 * The check of a form elicitation's answer: accepted content must match the
 * `requestedSchema` (2025-11-25: servers SHOULD validate elicitation responses).
 *
 * @param params The elicitation asked.
 * @param answer The client's answer, already valid as an `ElicitResult`.
 * @returns The outcome ({@link ACCEPTED} for anything but a form `accept`).
 */
export const checkContent: AnswerCheck = (params, answer) => {
  const { mode, requestedSchema } = params as ElicitParams;
  const { action, content } = answer as ElicitResult;
  if (action !== "accept" || mode === "url") return ACCEPTED;
  if (typeof requestedSchema !== "object" || requestedSchema === null) return ACCEPTED;
  return requestedSchemas.get(requestedSchema)(content ?? {});
};
