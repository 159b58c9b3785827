/**
 * Params schemas of the client's requests and notifications, shared by the
 * protocol versions; each version picks the ones its version has.
 *
 * @module
 */

import { LOG_LEVELS } from "@anubis/core/engine";
import * as s from "@anubis/core/schema";

const id: s.Schema = s.union([s.string(), s.integer()]);
const anyObject: s.Schema = s.record(s.unknown());

/** Legacy request params: `_meta` is optional, with an optional progress token. */
export const legacyMeta: s.Schema = s.optional(
  s.object({ progressToken: s.optional(id) }),
);

const statelessMetaShape = {
  "io.modelcontextprotocol/protocolVersion": s.string(),
  "io.modelcontextprotocol/clientCapabilities": anyObject,
  "io.modelcontextprotocol/clientInfo": s.optional(
    s.object({ name: s.string(), version: s.string() }),
  ),
  "io.modelcontextprotocol/logLevel": s.optional(s.enumeration(LOG_LEVELS)),
  progressToken: s.optional(id),
};
const statelessMetaObject = s.object(statelessMetaShape);
const logLevels = new Set<unknown>(LOG_LEVELS);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Whether `value` passes {@link statelessMetaShape} for sure, read in the
 * shape's own terms (one keyed read per property, no issues array); `false`
 * only means "let the schema say what is wrong", so its answers stay the same.
 */
function wellFormedStatelessMeta(value: unknown): boolean {
  if (!isObject(value)) return false;
  if (typeof value["io.modelcontextprotocol/protocolVersion"] !== "string") return false;
  // `record(unknown())` accepts any object.
  if (!isObject(value["io.modelcontextprotocol/clientCapabilities"])) return false;
  const info = value["io.modelcontextprotocol/clientInfo"];
  if (
    info !== undefined &&
    !(isObject(info) && typeof info.name === "string" && typeof info.version === "string")
  ) return false;
  const level = value["io.modelcontextprotocol/logLevel"];
  if (level !== undefined && !logLevels.has(level)) return false;
  const token = value.progressToken;
  return token === undefined || typeof token === "string" || Number.isInteger(token);
}

/**
 * The `_meta` every stateless (2026-07-28) request carries. Checked on every
 * stateless request, so a well-formed envelope is accepted by a check written
 * for this shape; anything else goes to the object schema, which names the
 * issues.
 */
export const statelessMeta: s.ObjectSchema<typeof statelessMetaShape> = {
  ...statelessMetaObject,
  check(value, path, issues) {
    if (!wellFormedStatelessMeta(value)) statelessMetaObject.check(value, path, issues);
  },
};

/** Params shapes without `_meta`, by method. */
export const PARAMS: Record<string, s.Shape> = {
  "initialize": {
    protocolVersion: s.string(),
    capabilities: anyObject,
    clientInfo: s.object({ name: s.string(), version: s.string() }),
  },
  "ping": {},
  "server/discover": {},
  "tools/list": { cursor: s.optional(s.string()) },
  "prompts/list": { cursor: s.optional(s.string()) },
  "resources/list": { cursor: s.optional(s.string()) },
  "resources/templates/list": { cursor: s.optional(s.string()) },
  "tasks/list": { cursor: s.optional(s.string()) },
  "tools/call": { name: s.string(), arguments: s.optional(anyObject) },
  "prompts/get": { name: s.string(), arguments: s.optional(s.record(s.string())) },
  "resources/read": { uri: s.string() },
  "skills/list": { cursor: s.optional(s.string()) },
  "skills/get": { uri: s.string() },
  "resources/directory/read": { uri: s.string(), cursor: s.optional(s.string()) },
  "resources/subscribe": { uri: s.string() },
  "resources/unsubscribe": { uri: s.string() },
  "logging/setLevel": { level: s.enumeration(LOG_LEVELS) },
  "completion/complete": {
    ref: s.discriminated("type", {
      "ref/prompt": s.object({ type: s.literal("ref/prompt"), name: s.string() }),
      "ref/resource": s.object({ type: s.literal("ref/resource"), uri: s.string() }),
    }),
    argument: s.object({ name: s.string(), value: s.string() }),
    context: s.optional(s.object({ arguments: s.optional(s.record(s.string())) })),
  },
  "tasks/get": { taskId: s.string() },
  "tasks/result": { taskId: s.string() },
  "tasks/cancel": { taskId: s.string() },
  "tasks/update": { taskId: s.string(), inputResponses: anyObject },
  "subscriptions/listen": {
    notifications: s.object({
      toolsListChanged: s.optional(s.boolean()),
      promptsListChanged: s.optional(s.boolean()),
      resourcesListChanged: s.optional(s.boolean()),
      resourceSubscriptions: s.optional(s.array(s.string())),
      taskIds: s.optional(s.array(s.string())),
    }),
  },
};

/** The multi round-trip params of the three methods that may ask for input. */
export const INPUT_PARAMS: s.Shape = {
  inputResponses: s.optional(anyObject),
  requestState: s.optional(s.string()),
};

/** Notification params shapes, by method. */
export const NOTIFICATION_PARAMS: Record<string, s.Shape> = {
  "notifications/initialized": {},
  "notifications/cancelled": { requestId: s.optional(id), reason: s.optional(s.string()) },
  "notifications/progress": {
    progressToken: id,
    progress: s.number(),
    total: s.optional(s.number()),
    message: s.optional(s.string()),
  },
  "notifications/roots/list_changed": {},
  "notifications/tasks/status": { taskId: s.string() },
};
