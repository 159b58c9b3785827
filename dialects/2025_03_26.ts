/**
 * MCP 2025-03-26: the support floor, and the base every later version is
 * stated against. JSON-RPC batches; no titles, structured output or
 * elicitation; no `MCP-Protocol-Version` header.
 *
 * @module
 */

import { ErrorCode, McpError } from "@anubis/core";
import type { Dialect } from "@anubis/core/engine";
import { defineDialect, type DialectSpec } from "./define_dialect.ts";
import { legacyEncoder } from "./_encoding.ts";

/**
 * The facts of 2025-03-26, which {@link spec2025_06_18} builds on.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { spec2025_03_26 } from "@anubis/dialects";
 * assert.equal(spec2025_03_26.era, "legacy");
 * assert.ok(spec2025_03_26.requestMethods.includes("initialize"));
 * ```
 */
export const spec2025_03_26: DialectSpec = {
  version: "2025-03-26",
  era: "legacy",
  requestMethods: [
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "logging/setLevel",
    "completion/complete",
  ],
  notificationMethods: [
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/progress",
    "notifications/roots/list_changed",
  ],
  serverRequestMethods: ["ping", "sampling/createMessage", "roots/list"],
  serverNotificationMethods: [
    "notifications/cancelled",
    "notifications/progress",
    "notifications/message",
    // What changed on the server, for clients that listen.
    "notifications/tools/list_changed",
    "notifications/prompts/list_changed",
    "notifications/resources/list_changed",
    "notifications/resources/updated",
  ],
  capabilityKeys: {
    experimental: "any",
    logging: [],
    completions: [],
    prompts: ["listChanged"],
    resources: ["subscribe", "listChanged"],
    tools: ["listChanged"],
  },
  features: ["batching", "audio", "tool_annotations"],
  transportRules: {
    batching: true,
    protocolVersionHeader: false,
    primingEvents: false,
    resumablePostStreams: false,
  },
  encodeResult: legacyEncoder({
    tool: ["title", "outputSchema", "icons", "execution", "_meta"],
    component: ["title", "icons", "_meta"],
    argument: ["title"],
    implementation: ["title", "description", "websiteUrl", "icons"],
    callResult: ["structuredContent"],
    content: ["_meta"],
    annotations: ["lastModified"],
    resourceLinks: false,
  }),
  encodeServerRequest: (_method, params) => params,
  resourceNotFound: (uri) =>
    new McpError(ErrorCode.RESOURCE_NOT_FOUND, `Resource not found: ${uri}`, { uri }),
};

/**
 * MCP 2025-03-26: the support floor. JSON-RPC batches, no titles, no
 * structured output, no elicitation.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { v2025_03_26 } from "@anubis/dialects";
 * assert.equal(v2025_03_26.transportRules.batching, true);
 * assert.equal(v2025_03_26.supportsFeature("elicitation"), false);
 * ```
 */
export const v2025_03_26: Dialect = defineDialect(spec2025_03_26);
