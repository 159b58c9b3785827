/**
 * The four protocol versions: 2025-03-26, 2025-06-18, 2025-11-25 (legacy
 * era) and 2026-07-28 (stateless era).
 *
 * @module
 */

import { type Dialect, ErrorCode, McpError } from "@anubis/core";
import { defineDialect } from "./define_dialect.ts";
import { encodeStatelessResult, legacyEncoder, strip } from "./encoding.ts";

const LEGACY_REQUESTS = [
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
] as const;
const LEGACY_NOTIFICATIONS = [
  "notifications/initialized",
  "notifications/cancelled",
  "notifications/progress",
  "notifications/roots/list_changed",
] as const;
const CHANGE_NOTIFICATIONS = [
  "notifications/tools/list_changed",
  "notifications/prompts/list_changed",
  "notifications/resources/list_changed",
  "notifications/resources/updated",
] as const;
const BASE_SERVER_NOTIFICATIONS = [
  "notifications/cancelled",
  "notifications/progress",
  "notifications/message",
  ...CHANGE_NOTIFICATIONS,
] as const;
const CAPABILITIES_2025 = {
  experimental: "any",
  logging: [],
  completions: [],
  prompts: ["listChanged"],
  resources: ["subscribe", "listChanged"],
  tools: ["listChanged"],
} as const;
const LEGACY_RULES = { batching: false, protocolVersionHeader: true };
const BASE_FEATURES = ["audio", "tool_annotations"] as const;
/** What 2025-11-25 brought, kept by the stateless era (which drops tasks). */
const FEATURES_SINCE_2025_11_25 = [
  ...BASE_FEATURES,
  "titles",
  "icons",
  "structured_output",
  "resource_links",
  "elicitation",
  "url_elicitation",
  "sampling_tools",
  "completion_context",
  "tool_input_errors_as_results",
] as const;

function legacyNotFound(uri: string): McpError {
  return new McpError(ErrorCode.RESOURCE_NOT_FOUND, `Resource not found: ${uri}`, { uri });
}

const keep = (_method: string, params: Record<string, unknown>) => params;

/**
 * MCP 2025-03-26: the support floor. JSON-RPC batches, no titles, no
 * structured output, no elicitation.
 *
 * @example
 * ```ts
 * import { v2025_03_26 } from "@anubis/dialects";
 * console.log(v2025_03_26.transportRules.batching); // true
 * ```
 */
export const v2025_03_26: Dialect = defineDialect({
  version: "2025-03-26",
  era: "legacy",
  requestMethods: LEGACY_REQUESTS,
  notificationMethods: LEGACY_NOTIFICATIONS,
  serverRequestMethods: ["ping", "sampling/createMessage", "roots/list"],
  serverNotificationMethods: BASE_SERVER_NOTIFICATIONS,
  capabilityKeys: CAPABILITIES_2025,
  features: ["batching", ...BASE_FEATURES],
  transportRules: { batching: true, protocolVersionHeader: false },
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
  encodeServerRequest: keep,
  resourceNotFound: legacyNotFound,
});

/**
 * MCP 2025-06-18: titles, structured tool output, resource links, form
 * elicitation; batching removed.
 *
 * @example
 * ```ts
 * import { v2025_06_18 } from "@anubis/dialects";
 * console.log(v2025_06_18.supportsFeature("elicitation")); // true
 * ```
 */
export const v2025_06_18: Dialect = defineDialect({
  version: "2025-06-18",
  era: "legacy",
  requestMethods: LEGACY_REQUESTS,
  notificationMethods: LEGACY_NOTIFICATIONS,
  serverRequestMethods: ["ping", "sampling/createMessage", "roots/list", "elicitation/create"],
  serverNotificationMethods: BASE_SERVER_NOTIFICATIONS,
  capabilityKeys: CAPABILITIES_2025,
  features: [
    ...BASE_FEATURES,
    "titles",
    "structured_output",
    "resource_links",
    "elicitation",
    "completion_context",
  ],
  transportRules: LEGACY_RULES,
  encodeResult: legacyEncoder({
    tool: ["icons", "execution"],
    component: ["icons"],
    argument: [],
    implementation: ["description", "websiteUrl", "icons"],
    callResult: [],
    content: [],
    annotations: [],
    resourceLinks: true,
  }),
  // Form mode only, and no `mode` field in this version.
  encodeServerRequest: (method, params) =>
    method === "elicitation/create" ? strip(params, ["mode"]) : params,
  resourceNotFound: legacyNotFound,
});

/**
 * MCP 2025-11-25: icons, URL elicitation, sampling tools, tasks, and
 * invalid tool input reported as tool errors.
 *
 * @example
 * ```ts
 * import { v2025_11_25 } from "@anubis/dialects";
 * console.log(v2025_11_25.supportsFeature("tool_input_errors_as_results")); // true
 * ```
 */
export const v2025_11_25: Dialect = defineDialect({
  version: "2025-11-25",
  era: "legacy",
  requestMethods: [...LEGACY_REQUESTS, "tasks/get", "tasks/result", "tasks/list", "tasks/cancel"],
  notificationMethods: [...LEGACY_NOTIFICATIONS, "notifications/tasks/status"],
  serverRequestMethods: ["ping", "sampling/createMessage", "roots/list", "elicitation/create"],
  serverNotificationMethods: [
    ...BASE_SERVER_NOTIFICATIONS,
    "notifications/elicitation/complete",
    "notifications/tasks/status",
  ],
  capabilityKeys: { ...CAPABILITIES_2025, tasks: ["list", "cancel", "requests"] },
  features: [...FEATURES_SINCE_2025_11_25, "tasks"],
  transportRules: LEGACY_RULES,
  encodeResult: legacyEncoder({
    tool: [],
    component: [],
    argument: [],
    implementation: [],
    callResult: [],
    content: [],
    annotations: [],
    resourceLinks: true,
  }),
  // URL elicitation needs the id `notifications/elicitation/complete` refers to.
  encodeServerRequest: (method, params) =>
    method === "elicitation/create" && params.mode === "url" && params.elicitationId === undefined
      ? { ...params, elicitationId: crypto.randomUUID() }
      : params,
  resourceNotFound: legacyNotFound,
});

/**
 * MCP 2026-07-28: the stateless era. Every request carries its `_meta`;
 * `server/discover`, `subscriptions/listen`, multi round-trip input,
 * `resultType` on every result and caching fields on cacheable ones.
 *
 * @example
 * ```ts
 * import { v2026_07_28 } from "@anubis/dialects";
 * console.log(v2026_07_28.era, v2026_07_28.requestMethods.includes("ping")); // stateless false
 * ```
 */
export const v2026_07_28: Dialect = defineDialect({
  version: "2026-07-28",
  era: "stateless",
  requestMethods: [
    "server/discover",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "subscriptions/listen",
    "completion/complete",
  ],
  notificationMethods: ["notifications/cancelled"],
  serverRequestMethods: [],
  inputRequestMethods: ["sampling/createMessage", "roots/list", "elicitation/create"],
  serverNotificationMethods: [
    ...BASE_SERVER_NOTIFICATIONS,
    "notifications/subscriptions/acknowledged",
  ],
  capabilityKeys: { ...CAPABILITIES_2025, extensions: "any" },
  features: [
    ...FEATURES_SINCE_2025_11_25,
    "input_required",
    "result_type",
    "caching",
    "discover",
    "listen",
  ],
  transportRules: LEGACY_RULES,
  encodeResult: encodeStatelessResult,
  // URL elicitation has no elicitationId in this version.
  encodeServerRequest: (method, params) =>
    method === "elicitation/create" ? strip(params, ["elicitationId"]) : params,
  resourceNotFound: (uri) =>
    new McpError(ErrorCode.INVALID_PARAMS, `Resource not found: ${uri}`, { uri }),
});

/**
 * Every version, newest first.
 *
 * @example
 * ```ts
 * import { ALL_DIALECTS } from "@anubis/dialects";
 * console.log(ALL_DIALECTS.map((d) => d.version)[0]); // 2026-07-28
 * ```
 */
export const ALL_DIALECTS: readonly Dialect[] = [
  v2026_07_28,
  v2025_11_25,
  v2025_06_18,
  v2025_03_26,
];
