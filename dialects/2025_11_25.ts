/**
 * MCP 2025-11-25, stated as what it changes from 2025-06-18: icons, URL
 * elicitation, sampling tools, tasks, invalid tool input reported as tool
 * errors, and SSE priming events with resumable POST streams (SEP-1699).
 *
 * @module
 */

import type { Dialect } from "@anubis/core/engine";
import { spec2025_06_18 } from "./2025_06_18.ts";
import { defineDialect, type DialectSpec } from "./define_dialect.ts";
import { legacyEncoder } from "./_encoding.ts";

const base = spec2025_06_18;

/**
 * The facts of 2025-11-25: those of {@link spec2025_06_18} with its changes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { spec2025_11_25 } from "@anubis/dialects";
 * assert.ok(spec2025_11_25.requestMethods.includes("tasks/get"));
 * assert.equal(spec2025_11_25.transportRules.primingEvents, true);
 * ```
 */
export const spec2025_11_25: DialectSpec = {
  ...base,
  version: "2025-11-25",
  requestMethods: [
    ...base.requestMethods,
    "tasks/get",
    "tasks/result",
    "tasks/list",
    "tasks/cancel",
  ],
  notificationMethods: [...base.notificationMethods, "notifications/tasks/status"],
  serverNotificationMethods: [
    ...base.serverNotificationMethods,
    "notifications/elicitation/complete",
    "notifications/tasks/status",
  ],
  capabilityKeys: { ...base.capabilityKeys, tasks: ["list", "cancel", "requests"] },
  features: [
    ...base.features,
    "icons",
    "url_elicitation",
    "sampling_tools",
    "tool_input_errors_as_results",
    "tasks",
  ],
  transportRules: { ...base.transportRules, primingEvents: true, resumablePostStreams: true },
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
};

/**
 * MCP 2025-11-25: icons, URL elicitation, sampling tools, tasks, and
 * invalid tool input reported as tool errors.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { v2025_11_25 } from "@anubis/dialects";
 * assert.equal(v2025_11_25.supportsFeature("tool_input_errors_as_results"), true);
 * ```
 */
export const v2025_11_25: Dialect = defineDialect(spec2025_11_25);
