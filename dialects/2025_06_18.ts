/**
 * MCP 2025-06-18, stated as what it changes from 2025-03-26: titles,
 * structured tool output, resource links, form elicitation and completion
 * context come; JSON-RPC batching goes; the `MCP-Protocol-Version` header
 * comes.
 *
 * @module
 */

import type { Dialect } from "@anubis/core/engine";
import { spec2025_03_26 } from "./2025_03_26.ts";
import { defineDialect, type DialectSpec, without } from "./define_dialect.ts";
import { legacyEncoder, strip } from "./_encoding.ts";

const base = spec2025_03_26;

/**
 * The facts of 2025-06-18: those of {@link spec2025_03_26} with its changes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { spec2025_06_18 } from "@anubis/dialects";
 * assert.ok(spec2025_06_18.serverRequestMethods.includes("elicitation/create"));
 * assert.equal(spec2025_06_18.transportRules.protocolVersionHeader, true);
 * ```
 */
export const spec2025_06_18: DialectSpec = {
  ...base,
  version: "2025-06-18",
  serverRequestMethods: [...base.serverRequestMethods, "elicitation/create"],
  features: [
    ...without(base.features, "batching"),
    "titles",
    "structured_output",
    "resource_links",
    "elicitation",
    "completion_context",
  ],
  transportRules: { ...base.transportRules, batching: false, protocolVersionHeader: true },
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
};

/**
 * MCP 2025-06-18: titles, structured tool output, resource links, form
 * elicitation; batching removed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { v2025_06_18 } from "@anubis/dialects";
 * assert.equal(v2025_06_18.supportsFeature("elicitation"), true);
 * assert.equal(v2025_06_18.supportsFeature("batching"), false);
 * ```
 */
export const v2025_06_18: Dialect = defineDialect(spec2025_06_18);
