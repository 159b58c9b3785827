/**
 * Builds a {@link Dialect} from the facts of one version, so each version
 * module states only what its version is.
 *
 * @module
 */

import { ErrorCode, McpError, type ServerCapabilities } from "@anubis/core";
import { type Dialect, type Feature, INPUT_REQUIRED_METHODS } from "@anubis/core/engine";
import * as s from "@anubis/core/schema";
import {
  INPUT_PARAMS,
  legacyMeta,
  NOTIFICATION_PARAMS,
  PARAMS,
  statelessMeta,
} from "./_schemas.ts";
import { resultSchemas } from "./_result_schemas.ts";
import { serverNotificationParamsSchemas, serverRequestParamsSchemas } from "./_message_schemas.ts";

/**
 * The facts of one version.
 *
 * @example
 * ```ts
 * import type { DialectSpec } from "@anubis/dialects";
 * const spec: Partial<DialectSpec> = { version: "2099-01-01", era: "stateless" };
 * ```
 */
export interface DialectSpec extends
  Pick<
    Dialect,
    | "version"
    | "era"
    | "requestMethods"
    | "notificationMethods"
    | "serverRequestMethods"
    | "serverNotificationMethods"
    | "transportRules"
    | "encodeResult"
    | "encodeServerRequest"
    | "resourceNotFound"
  > {
  /** Server-to-client requests embedded in `input_required` results (stateless era). */
  inputRequestMethods?: readonly string[];
  /** The capability keys (and their sub-keys) this version advertises. */
  capabilityKeys: Readonly<Record<string, readonly string[] | "any">>;
  /** The features of this version (the dialect's `supportedFeatures`). */
  features: readonly Feature[];
}

/**
 * Builds a dialect from its spec: the params schemas come from the shared
 * shapes, wrapped with the era's `_meta` rule.
 *
 * @param spec The version's facts.
 * @returns The dialect.
 *
 * @example
 * ```ts
 * import { v2025_11_25 } from "@anubis/dialects";
 * import assert from "node:assert/strict";
 * assert.equal(v2025_11_25.supportsFeature("icons"), true);
 * ```
 */
export function defineDialect(spec: DialectSpec): Dialect {
  const stateless = spec.era === "stateless";
  const params = new Map<string, s.Schema>();
  for (const method of spec.requestMethods) {
    const shape = { ...PARAMS[method], _meta: stateless ? statelessMeta : legacyMeta };
    if (stateless && INPUT_REQUIRED_METHODS.has(method)) Object.assign(shape, INPUT_PARAMS);
    // Stateless params are required (they carry `_meta`); legacy ones may be absent.
    params.set(method, s.object(shape));
  }
  const notifications = new Map<string, s.Schema>();
  for (const method of spec.notificationMethods) {
    notifications.set(
      method,
      s.object({ ...NOTIFICATION_PARAMS[method], _meta: s.optional(s.record(s.unknown())) }),
    );
  }
  const requestMessageSchema = s.refine(
    s.object({
      jsonrpc: s.literal("2.0"),
      id: s.union([s.string(), s.integer()]),
      method: s.string(),
    }),
    (m) => {
      const schema = params.get(m.method);
      if (!schema) return `unknown method ${m.method}`;
      const checked = s.validate(schema, (m as { params?: unknown }).params ?? {});
      return checked.ok ? undefined : s.formatIssues(checked.issues);
    },
  );
  const notificationMessageSchema = s.refine(
    s.object({ jsonrpc: s.literal("2.0"), method: s.string() }),
    (m) => {
      const schema = notifications.get(m.method);
      if (!schema) return `unknown notification ${m.method}`;
      const checked = s.validate(schema, (m as { params?: unknown }).params ?? {});
      return checked.ok ? undefined : s.formatIssues(checked.issues);
    },
  );
  const features = new Set(spec.features);
  const version = spec.version;
  const shapedCapabilities = new WeakMap<ServerCapabilities, ServerCapabilities>();
  const results = pick(resultSchemas(features), [
    ...spec.requestMethods,
    ...spec.serverRequestMethods,
    ...spec.inputRequestMethods ?? [],
  ]);
  const serverNotifications = pick(
    serverNotificationParamsSchemas(features),
    spec.serverNotificationMethods,
  );
  const serverRequests = pick(serverRequestParamsSchemas(features), [
    ...spec.serverRequestMethods,
    ...spec.inputRequestMethods ?? [],
  ]);
  return {
    version: spec.version,
    era: spec.era,
    requestMethods: spec.requestMethods,
    notificationMethods: spec.notificationMethods,
    serverRequestMethods: spec.serverRequestMethods,
    serverNotificationMethods: spec.serverNotificationMethods,
    requestParamsSchema: (method) => params.get(method),
    notificationParamsSchema: (method) => notifications.get(method),
    requestResultSchema: (method) => results.get(method),
    serverNotificationParamsSchema: (method) => serverNotifications.get(method),
    serverRequestParamsSchema: (method) => serverRequests.get(method),
    requestMessageSchema,
    notificationMessageSchema,
    progressParamsSchema: serverNotificationParamsSchemas(features)["notifications/progress"],
    requestMetaSchema: stateless ? statelessMeta : undefined,
    serverCapabilities: (declared) => {
      // A server declares its capabilities once: shape them once per server.
      let shaped = shapedCapabilities.get(declared);
      if (!shaped) {
        shaped = shapeCapabilities(declared, spec.capabilityKeys);
        shapedCapabilities.set(declared, shaped);
      }
      return shaped;
    },
    supportedFeatures: spec.features,
    supportsFeature: (feature) => features.has(feature),
    transportRules: spec.transportRules,
    encodeResult: spec.encodeResult,
    encodeServerRequest: (method, params) => {
      const encoded = spec.encodeServerRequest(method, params);
      const schema = serverRequests.get(method);
      // The server never sends what its version cannot carry: a handler's
      // mistake surfaces to the handler instead of reaching the client.
      const checked = schema ? s.validate(schema, encoded) : undefined;
      if (!schema || !checked!.ok) {
        const why = checked && !checked.ok ? s.formatIssues(checked.issues) : "not in this version";
        throw new McpError(ErrorCode.INTERNAL_ERROR, `Invalid ${method} for ${version}: ${why}`);
      }
      return encoded;
    },
    resourceNotFound: spec.resourceNotFound,
  };
}

/**
 * A version's list without the entries it drops from its predecessor's.
 * Internal: for the version modules.
 */
export function without<T>(list: readonly T[], ...dropped: readonly T[]): T[] {
  return list.filter((item) => !dropped.includes(item));
}

/**
 * A version's record without the keys it drops from its predecessor's.
 * Internal: for the version modules.
 */
export function withoutKeys<V>(
  record: Readonly<Record<string, V>>,
  ...dropped: readonly string[]
): Record<string, V> {
  return Object.fromEntries(Object.entries(record).filter(([key]) => !dropped.includes(key)));
}

/** The schemas of the methods a version has. */
function pick(
  schemas: Record<string, s.Schema>,
  methods: readonly string[],
): Map<string, s.Schema> {
  return new Map(methods.flatMap((m) => (schemas[m] ? [[m, schemas[m]] as const] : [])));
}

function shapeCapabilities(
  declared: ServerCapabilities,
  keys: Readonly<Record<string, readonly string[] | "any">>,
): ServerCapabilities {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(declared)) {
    const allowed = keys[key];
    if (!allowed || value === undefined || value === null || typeof value !== "object") continue;
    if (allowed === "any") {
      out[key] = value;
      continue;
    }
    const sub: Record<string, unknown> = {};
    for (const name of allowed) {
      const v = (value as Record<string, unknown>)[name];
      if (v !== undefined) sub[name] = v;
    }
    out[key] = sub;
  }
  return out as ServerCapabilities;
}
