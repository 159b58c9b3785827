/**
 * The 2026-07-28 request header ladder (digest §2.4): `MCP-Protocol-Version`,
 * `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` checked against the body in the
 * order the spec and the conformance suite fix, with `=?base64?…?=` values
 * decoded and surrounding whitespace trimmed.
 *
 * @module
 */

import {
  ErrorCode,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonSchema,
  McpError,
  type ToolDefinition,
} from "@anubis/core";
import { type Dialect, type Engine, isStandardSchema, toJsonSchema } from "@anubis/core/engine";

/** The methods whose `Mcp-Name` header mirrors a param, and which param. */
const NAME_PARAM: Readonly<Record<string, string>> = {
  "tools/call": "name",
  "prompts/get": "name",
  "resources/read": "uri",
  "tasks/get": "taskId",
  "tasks/update": "taskId",
  "tasks/cancel": "taskId",
};

const SENTINEL_PREFIX = "=?base64?";
const SENTINEL_SUFFIX = "?=";
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Decodes an `Mcp-Name` or `Mcp-Param-*` value: trims it, and unwraps the
 * `=?base64?…?=` sentinel (lowercase markers only; anything else is literal).
 *
 * @param raw The header value.
 * @returns The decoded text, or `undefined` when the sentinel holds invalid base64 or UTF-8.
 *
 * @example
 * ```ts
 * import { decodeHeaderValue } from "./_stateless_headers.ts";
 * import assert from "node:assert/strict";
 * assert.equal(decodeHeaderValue("=?base64?SGVsbG8sIOS4lueVjA==?="), "Hello, 世界");
 * assert.equal(decodeHeaderValue("  plain "), "plain");
 * ```
 */
export function decodeHeaderValue(raw: string): string | undefined {
  const value = raw.trim();
  if (!value.startsWith(SENTINEL_PREFIX) || !value.endsWith(SENTINEL_SUFFIX)) return value;
  const body = value.slice(SENTINEL_PREFIX.length, value.length - SENTINEL_SUFFIX.length);
  if (value.length < SENTINEL_PREFIX.length + SENTINEL_SUFFIX.length || !BASE64.test(body)) {
    return undefined;
  }
  try {
    return utf8.decode(Uint8Array.from(atob(body), (c) => c.charCodeAt(0)));
  } catch {
    return undefined;
  }
}

function mismatch(header: string, got: string, expected: unknown): McpError {
  return new McpError(
    ErrorCode.HEADER_MISMATCH,
    `Header mismatch: ${header} header value '${got}' does not match body value '${
      String(expected)
    }'`,
  );
}

function missing(header: string): McpError {
  return new McpError(ErrorCode.HEADER_MISMATCH, `Header mismatch: missing ${header} header`);
}

/**
 * Checks a stateless-era message's headers against its body, in the spec's
 * order: version mismatch, method mismatch, unsupported version, missing
 * headers and `Mcp-Name`, then `Mcp-Param-*`. The `_meta` envelope (which
 * precedes them all) is the engine's: call `engine.validateEnvelope` first
 * when this returns an error, so the earlier rung wins.
 *
 * @param message A message whose `_meta` claims the stateless era.
 * @param version The claimed version.
 * @param headers The request headers.
 * @param engine The engine (served versions, tools).
 * @param dialect The claimed version's served stateless dialect, when the
 * caller already looked it up (default: `engine.dialect(version, "stateless")`).
 * @returns The error to answer with HTTP 400, or `undefined`.
 *
 * @example
 * ```ts
 * import { defineServer } from "@anubis/core";
 * import { Engine } from "@anubis/core/engine";
 * import { createDefaultRegistry } from "@anubis/dialects";
 * import { checkStatelessHeaders } from "./_stateless_headers.ts";
 * import assert from "node:assert/strict";
 * const engine = new Engine(defineServer({ name: "s", version: "1" }), {
 *   registry: createDefaultRegistry(),
 * });
 * const request = { jsonrpc: "2.0" as const, id: 1, method: "tools/list", params: {} };
 * const headers = new Headers({ "mcp-protocol-version": "2026-07-28", "mcp-method": "TOOLS/LIST" });
 * assert.equal(checkStatelessHeaders(request, "2026-07-28", headers, engine)?.code, -32020);
 * engine.close();
 * ```
 */
export function checkStatelessHeaders(
  message: JsonRpcRequest | JsonRpcNotification,
  version: unknown,
  headers: Headers,
  engine: Engine,
  dialect: Dialect | undefined = engine.dialect(version, "stateless"),
): McpError | undefined {
  const headerVersion = headers.get("mcp-protocol-version")?.trim();
  if (headerVersion !== undefined && headerVersion !== version) {
    return mismatch("MCP-Protocol-Version", headerVersion, version);
  }
  const method = headers.get("mcp-method")?.trim();
  if (method !== undefined && method !== message.method) {
    return mismatch("Mcp-Method", method, message.method);
  }
  if (!dialect) {
    return new McpError(ErrorCode.UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version", {
      supported: engine.supportedVersions(),
      requested: version,
    });
  }
  if (headerVersion === undefined && dialect.transportRules.protocolVersionHeader) {
    return missing("MCP-Protocol-Version");
  }
  if (method === undefined) return missing("Mcp-Method");
  if (!("id" in message)) return undefined;
  const params = message.params ?? {};
  const nameParam = NAME_PARAM[message.method];
  if (nameParam) {
    // A name that is no string is a bad body (-32602), not a header mismatch.
    if (typeof params[nameParam] !== "string") {
      return new McpError(
        ErrorCode.INVALID_PARAMS,
        `Invalid params: ${nameParam} must be a string`,
      );
    }
    const raw = headers.get("mcp-name");
    if (raw === null) return missing("Mcp-Name");
    const name = decodeHeaderValue(raw);
    if (name === undefined) {
      return new McpError(
        ErrorCode.HEADER_MISMATCH,
        "Header mismatch: Mcp-Name is not valid base64",
      );
    }
    if (name !== params[nameParam]) return mismatch("Mcp-Name", name, params[nameParam]);
  }
  if (message.method === "tools/call" && typeof params.name === "string") {
    const tool = engine.server.tools.get(params.name);
    if (tool) return checkParamHeaders(tool, params.arguments, headers);
  }
  return undefined;
}

interface ParamHeader {
  header: string;
  /** The header's name as the schema declares it, for error messages. */
  display: string;
  path: string[];
  type: unknown;
}

const paramHeaders = new WeakMap<ToolDefinition<never>, ParamHeader[]>();

/** The `x-mcp-header` properties of a tool, reachable through `properties` chains only. */
function paramHeadersOf(tool: ToolDefinition<never>): ParamHeader[] {
  let found = paramHeaders.get(tool);
  if (found) return found;
  found = [];
  const walk = (schema: JsonSchema, path: string[]) => {
    const properties = schema.properties;
    if (typeof properties !== "object" || properties === null) return;
    for (const [key, child] of Object.entries(properties as Record<string, JsonSchema>)) {
      if (typeof child !== "object" || child === null) continue;
      const name = child["x-mcp-header"];
      if (typeof name === "string" && name !== "") {
        found!.push({
          header: `mcp-param-${name.toLowerCase()}`,
          display: `Mcp-Param-${name}`,
          path: [...path, key],
          type: child.type,
        });
      }
      walk(child, [...path, key]);
    }
  };
  const schema = tool.inputSchema;
  // A Standard Schema without its own JSON Schema (valibot) declares no headers.
  if (schema && !(isStandardSchema(schema) && !schema["~standard"].jsonSchema)) {
    walk(toJsonSchema(schema), []);
  }
  paramHeaders.set(tool, found);
  return found;
}

function checkParamHeaders(
  tool: ToolDefinition<never>,
  args: unknown,
  headers: Headers,
): McpError | undefined {
  const declared = paramHeadersOf(tool);
  // Indexed: most tools declare none, and this runs on every stateless call.
  for (let i = 0; i < declared.length; i++) {
    const { header, display, path, type } = declared[i];
    let value: unknown = args;
    for (const key of path) {
      value = typeof value === "object" && value !== null
        ? (value as Record<string, unknown>)[key]
        : undefined;
    }
    if (value === undefined || value === null) continue;
    const raw = headers.get(header);
    if (raw === null) return missing(display);
    const decoded = decodeHeaderValue(raw);
    if (decoded === undefined) {
      return new McpError(
        ErrorCode.HEADER_MISMATCH,
        `Header mismatch: ${display} is not valid base64`,
      );
    }
    const equal = type === "integer" || typeof value === "number"
      ? decoded.trim() !== "" && Number(decoded) === value
      : decoded === String(value);
    if (!equal) return mismatch(display, decoded, value);
  }
  return undefined;
}
