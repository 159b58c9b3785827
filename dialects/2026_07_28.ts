/**
 * MCP 2026-07-28, the stateless era, stated as what it changes from
 * 2025-11-25: the handshake, `ping`, `logging/setLevel`, resource
 * subscriptions, core tasks, server-to-client requests and SSE resumability
 * go; `server/discover`, `subscriptions/listen`, multi round-trip input,
 * `resultType` on every result, caching fields on cacheable ones and the tasks
 * extension (`tasks/get`, `tasks/update`, `tasks/cancel`) and the skills
 * extension (`skills/list`, `skills/get`, `resources/directory/read`) come.
 *
 * @module
 */

import { ErrorCode, McpError } from "@anubis/core";
import type { Dialect } from "@anubis/core/engine";
import { spec2025_11_25 } from "./2025_11_25.ts";
import { defineDialect, type DialectSpec, without, withoutKeys } from "./define_dialect.ts";
import { encodeStatelessResult, strip } from "./_encoding.ts";

const base = spec2025_11_25;

/**
 * The facts of 2026-07-28: those of {@link spec2025_11_25} with its changes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { spec2026_07_28 } from "@anubis/dialects";
 * assert.equal(spec2026_07_28.era, "stateless");
 * assert.deepEqual(spec2026_07_28.serverRequestMethods, []);
 * ```
 */
export const spec2026_07_28: DialectSpec = {
  ...base,
  version: "2026-07-28",
  era: "stateless",
  requestMethods: [
    "server/discover",
    ...without(
      base.requestMethods,
      "initialize",
      "ping",
      "resources/subscribe",
      "resources/unsubscribe",
      "logging/setLevel",
      "tasks/get",
      "tasks/result",
      "tasks/list",
      "tasks/cancel",
    ),
    "subscriptions/listen",
    // The tasks extension's methods, for requests that declare it.
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
    // The skills extension's methods (SEP-2640), for a server with skills.
    "skills/list",
    "skills/get",
    "resources/directory/read",
  ],
  notificationMethods: without(
    base.notificationMethods,
    "notifications/initialized",
    "notifications/progress",
    "notifications/roots/list_changed",
    "notifications/tasks/status",
  ),
  // The server asks for input inside `input_required` results instead.
  serverRequestMethods: [],
  inputRequestMethods: without(base.serverRequestMethods, "ping"),
  serverNotificationMethods: [
    ...without(
      base.serverNotificationMethods,
      "notifications/elicitation/complete",
      "notifications/tasks/status",
    ),
    "notifications/subscriptions/acknowledged",
  ],
  capabilityKeys: { ...withoutKeys(base.capabilityKeys, "tasks"), extensions: "any" },
  features: [
    ...without(base.features, "tasks"),
    "input_required",
    "result_type",
    "caching",
    "discover",
    "listen",
    "tasks_extension",
    "skills_extension",
  ],
  transportRules: { ...base.transportRules, primingEvents: false, resumablePostStreams: false },
  encodeResult: encodeStatelessResult,
  // URL elicitation has no elicitationId in this version.
  encodeServerRequest: (method, params) =>
    method === "elicitation/create" ? strip(params, ["elicitationId"]) : params,
  resourceNotFound: (uri) =>
    new McpError(ErrorCode.INVALID_PARAMS, `Resource not found: ${uri}`, { uri }),
};

/**
 * MCP 2026-07-28: the stateless era. Every request carries its `_meta`;
 * `server/discover`, `subscriptions/listen`, multi round-trip input,
 * `resultType` on every result and caching fields on cacheable ones.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { v2026_07_28 } from "@anubis/dialects";
 * assert.equal(v2026_07_28.era, "stateless");
 * assert.equal(v2026_07_28.requestMethods.includes("ping"), false);
 * ```
 */
export const v2026_07_28: Dialect = defineDialect(spec2026_07_28);
