/**
 * What the server sends on its own, per version: the params of its
 * notifications (progress, log messages, cancellation, change
 * notifications, elicitation completion, task status, listen
 * acknowledgement) and of its requests to the client (ping, sampling, roots,
 * elicitation; embedded as input requests in the stateless era).
 *
 * @module
 */

import { type Feature, LOG_LEVELS } from "@anubis/core/engine";
import * as s from "@anubis/core/schema";
import {
  anyObject,
  componentSchemas,
  meta,
  progressToken,
  requestId,
  uri,
  when,
} from "./_component_schemas.ts";
import { primitiveSchemaDefinition } from "./_elicitation_schemas.ts";

const unitInterval = s.optional(s.number({ minimum: 0, maximum: 1 }));

/**
 * The params schemas of the server-to-client requests of a version with the
 * given features, by method.
 *
 * @param features The version's features.
 * @returns The schemas.
 *
 * @example
 * ```ts
 * import * as s from "@anubis/core/schema";
 * import { serverRequestParamsSchemas } from "./_message_schemas.ts";
 * import assert from "node:assert/strict";
 * const schemas = serverRequestParamsSchemas(new Set(["elicitation"]));
 * assert.equal(s.validate(schemas["sampling/createMessage"], { messages: [] }).ok, false);
 * ```
 */
export function serverRequestParamsSchemas(
  features: ReadonlySet<Feature>,
): Record<string, s.Schema> {
  const c = componentSchemas(features);
  const stateless = features.has("result_type");
  const requestedSchema = s.object({
    type: s.literal("object"),
    properties: s.record(primitiveSchemaDefinition(features)),
    required: s.optional(s.array(s.string())),
    $schema: s.optional(s.string()),
  });
  const form = s.object({
    message: s.string(),
    requestedSchema,
    ...when(features.has("url_elicitation"), { mode: s.optional(s.literal("form")) }),
    _meta: meta,
  });
  const url = s.object({
    mode: s.literal("url"),
    message: s.string(),
    url: uri,
    // The id that `notifications/elicitation/complete` refers to; gone in 2026.
    ...when(!stateless, { elicitationId: s.string() }),
    _meta: meta,
  });
  return {
    "ping": s.optional(s.object({ _meta: meta })),
    "roots/list": s.optional(s.object({ _meta: meta })),
    "sampling/createMessage": s.object({
      messages: s.array(s.object({
        role: s.enumeration(["user", "assistant"]),
        content: c.samplingContent,
      })),
      maxTokens: s.integer(),
      systemPrompt: s.optional(s.string()),
      includeContext: s.optional(s.enumeration(["none", "thisServer", "allServers"])),
      temperature: s.optional(s.number()),
      stopSequences: s.optional(s.array(s.string())),
      metadata: s.optional(anyObject),
      modelPreferences: s.optional(s.object({
        hints: s.optional(s.array(s.object({ name: s.optional(s.string()) }))),
        costPriority: unitInterval,
        speedPriority: unitInterval,
        intelligencePriority: unitInterval,
      })),
      ...when(features.has("sampling_tools"), {
        tools: s.optional(s.array(c.tool)),
        toolChoice: s.optional(
          s.object({ mode: s.optional(s.enumeration(["auto", "required", "none"])) }),
        ),
      }),
      _meta: meta,
    }),
    "elicitation/create": features.has("url_elicitation") ? s.union([form, url]) : form,
  };
}

/**
 * The params schemas of the server-to-client notifications of a version
 * with the given features, by method.
 *
 * @param features The version's features.
 * @returns The schemas.
 *
 * @example
 * ```ts
 * import * as s from "@anubis/core/schema";
 * import { serverNotificationParamsSchemas } from "./_message_schemas.ts";
 * import assert from "node:assert/strict";
 * const schemas = serverNotificationParamsSchemas(new Set());
 * assert.equal(s.validate(schemas["notifications/progress"], { progress: 1 }).ok, false);
 * ```
 */
export function serverNotificationParamsSchemas(
  features: ReadonlySet<Feature>,
): Record<string, s.Schema> {
  const stateless = features.has("result_type");
  // Change notifications on a 2026 listen stream name their subscription.
  const notificationMeta = stateless
    ? s.optional(s.object({ "io.modelcontextprotocol/subscriptionId": s.optional(requestId) }))
    : meta;
  const changed = s.optional(s.object({ _meta: notificationMeta }));
  const schemas: Record<string, s.Schema> = {
    "notifications/progress": s.object({
      progressToken,
      progress: s.number(),
      total: s.optional(s.number()),
      message: s.optional(s.string()),
      _meta: meta,
    }),
    "notifications/message": s.refine(
      s.object({
        level: s.enumeration(LOG_LEVELS),
        logger: s.optional(s.string()),
        data: s.unknown(),
        _meta: meta,
      }),
      (p) => ("data" in p ? undefined : "data is required"),
    ),
    "notifications/cancelled": s.object({
      // Optional only in 2025-11-25, where a task can be cancelled instead.
      requestId: features.has("tasks") ? s.optional(requestId) : requestId,
      reason: s.optional(s.string()),
      _meta: notificationMeta,
    }),
    "notifications/resources/updated": s.object({ uri, _meta: notificationMeta }),
    "notifications/resources/list_changed": changed,
    "notifications/tools/list_changed": changed,
    "notifications/prompts/list_changed": changed,
  };
  if (features.has("url_elicitation") && !stateless) {
    schemas["notifications/elicitation/complete"] = s.object({ elicitationId: s.string() });
  }
  if (features.has("tasks")) {
    schemas["notifications/tasks/status"] = s.extend(componentSchemas(features).task, {
      _meta: meta,
    });
  }
  if (features.has("listen")) {
    schemas["notifications/subscriptions/acknowledged"] = s.object({
      notifications: s.object({
        toolsListChanged: s.optional(s.boolean()),
        promptsListChanged: s.optional(s.boolean()),
        resourcesListChanged: s.optional(s.boolean()),
        resourceSubscriptions: s.optional(s.array(s.string())),
      }),
      _meta: notificationMeta,
    });
  }
  return schemas;
}
