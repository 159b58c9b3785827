/**
 * The official MCP spec JSON schemas, as the conformance suite validates
 * every server message with them (its `wire-schema-valid` check): read at
 * test time from the pinned `@modelcontextprotocol/conformance` npm package,
 * which bundles them into its `dist/index.js`, and applied the same way (the
 * method picks the definition, a result is checked against `<Name>Result` or
 * `InputRequiredResult`, an error against the definition of its code).
 *
 * Test support only: not published, not on the hot path.
 *
 * @module
 */

import { Ajv } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import "@modelcontextprotocol/conformance/package.json" with { type: "json" };

type Json = Record<string, unknown>;
type Validate = ((value: unknown) => boolean) & {
  errors?: { instancePath: string; message?: string; params?: unknown; keyword: string }[] | null;
};

/** The spec schema of one version, ready to validate messages. */
export interface SpecSchema {
  /** The version. */
  version: string;
  /** The definitions (`$defs` or `definitions`), by name. */
  defs: Readonly<Record<string, Json>>;
  /** The problems of one message the server sent (none when valid). */
  check(message: unknown, requestMethod?: string): string[];
  /** The problems of `value` against one definition. */
  checkDef(name: string, value: unknown): string[];
  /** The result definition of a request method, when the version has one. */
  resultDef(method: string): string | undefined;
  /** The keys of `value` that the definition `name` does not declare. */
  undeclared(name: string, value: Json): string[];
  /** The keys of a request's or notification's `params` that its method does not declare. */
  undeclaredParams(method: string, params: Json): string[];
}

const VERSIONS = ["2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"] as const;
const UNIONS = new Set([
  "ClientRequest",
  "ClientNotification",
  "ClientResult",
  "ClientMessage",
  "ServerRequest",
  "ServerNotification",
  "ServerResult",
  "ServerMessage",
]);

/** The text of the object literal that opens at `start`, skipping string literals. */
function literalAt(source: string, start: number): string {
  let depth = 0;
  for (let i = start; i < source.length; i++) {
    const c = source[i];
    if (c === "`" || c === '"' || c === "'") {
      for (i++; source[i] !== c; i++) if (source[i] === "\\") i++;
    } else if (c === "{" || c === "[") {
      depth++;
    } else if ((c === "}" || c === "]") && --depth === 0) {
      return source.slice(start, i + 1);
    }
  }
  throw new Error("unbalanced object literal in the conformance bundle");
}

/** The raw schemas of the four versions, extracted from the bundle. */
async function readBundle(): Promise<Record<string, Json>> {
  const pkg = import.meta.resolve("@modelcontextprotocol/conformance/package.json");
  const source = await Deno.readTextFile(new URL("dist/index.js", pkg));
  // The bundle keeps the schemas as `{"2025-03-26":A,"2025-06-18":B,"2025-11-25":C,[x]:D}`.
  const table = source.match(
    /\{"2025-03-26":(\w+),"2025-06-18":(\w+),"2025-11-25":(\w+),\[\w+\]:(\w+)\}/,
  );
  if (!table) throw new Error("no schema table in the conformance bundle");
  const out: Record<string, Json> = {};
  VERSIONS.forEach((version, i) => {
    const name = table[i + 1];
    const at = source.indexOf(`${name}={$schema:`);
    if (at < 0) throw new Error(`no schema literal for ${version}`);
    // A plain object literal (template strings for text); evaluated, never imported.
    out[version] = new Function(`return (${literalAt(source, at + name.length + 1)});`)() as Json;
  });
  return out;
}

/** The harness widens these integer keywords for the two versions whose TS types say number. */
function widenNumberSchema(version: string, schema: Json): Json {
  if (version !== "2025-11-25" && version !== "2025-06-18") return schema;
  const copy = structuredClone(schema);
  const defs = (copy.$defs ?? copy.definitions) as Record<string, Json>;
  const props = defs.NumberSchema?.properties as Record<string, Json> | undefined;
  for (const key of ["minimum", "maximum", "default"]) {
    if (props?.[key]?.type === "integer") props[key].type = "number";
  }
  return copy;
}

function compile(version: string, raw: Json): SpecSchema {
  const schema = widenNumberSchema(version, raw);
  const modern = String(schema.$schema).includes("2020-12");
  const options = { strict: false, allErrors: true };
  const ajv = modern ? new Ajv2020(options) : new Ajv(options);
  (addFormats as unknown as (a: unknown) => void)(ajv);
  ajv.addFormat("byte", true);
  const id = `mcp://${version}/schema.json`;
  ajv.addSchema({ ...schema, $id: id });
  const defsKey = "$defs" in schema ? "$defs" : "definitions";
  const defs = schema[defsKey] as Record<string, Json>;
  const methodDefs = new Map<string, string>();
  const resultDefs = new Map<string, string>();
  const errorDefs = new Map<number, string>();
  for (const [name, def] of Object.entries(defs)) {
    if (UNIONS.has(name)) continue;
    const props = (def.properties ?? {}) as Record<string, Json>;
    const method = props.method?.const;
    if (typeof method === "string") {
      methodDefs.set(method, name);
      const result = `${name.slice(0, -"Request".length)}Result`;
      if (name.endsWith("Request") && result in defs) resultDefs.set(method, result);
    }
    for (const part of (props.error?.allOf ?? []) as Json[]) {
      const code = (part.properties as Record<string, Json> | undefined)?.code?.const;
      if (typeof code === "number") errorDefs.set(code, name);
    }
  }
  const validators = new Map<string, Validate>();
  const checkDef = (name: string, value: unknown): string[] => {
    let validate = validators.get(name);
    if (!validate) {
      validate = ajv.compile({ $ref: `${id}#/${defsKey}/${name}` }) as Validate;
      validators.set(name, validate);
    }
    if (validate(value)) return [];
    return (validate.errors ?? []).map((e) =>
      `${name}${e.instancePath}: ${e.message}` +
      (e.keyword === "const" || e.keyword === "enum" ? ` ${JSON.stringify(e.params)}` : "")
    );
  };
  const first = (...names: string[]) => names.find((n) => n in defs) ?? names[names.length - 1];
  const check = (message: unknown, requestMethod?: string): string[] => {
    const m = (message ?? {}) as Json;
    if (typeof m.method === "string") {
      const fallback = "id" in m ? "JSONRPCRequest" : "JSONRPCNotification";
      return checkDef(methodDefs.get(m.method) ?? fallback, message);
    }
    if (m.error !== undefined && m.error !== null) {
      const code = (m.error as Json).code;
      const def = typeof code === "number" ? errorDefs.get(code) : undefined;
      return checkDef(def ?? first("JSONRPCErrorResponse", "JSONRPCError"), message);
    }
    if (m.result !== undefined) {
      const result = m.result as Json;
      const def = result?.resultType === "input_required" && "InputRequiredResult" in defs
        ? "InputRequiredResult"
        : requestMethod === undefined
        ? undefined
        : resultDefs.get(requestMethod);
      const problems = def ? checkDef(def, result) : [];
      return [...problems, ...checkDef(first("JSONRPCResultResponse", "JSONRPCResponse"), message)];
    }
    return ["not a JSON-RPC request, notification or response"];
  };
  const declaredIn = (def: Json): Set<string> => {
    // A key is declared when any part (or alternative) of the definition declares it.
    const parts = [def, ...["allOf", "anyOf", "oneOf"].flatMap((k) => (def[k] ?? []) as Json[])];
    const keys = new Set<string>();
    for (const part of parts) {
      const ref = part.$ref as string | undefined;
      if (ref) { for (const k of declared(ref.split("/").pop()!)) keys.add(k); }
      for (const k of Object.keys((part.properties ?? {}) as Json)) keys.add(k);
    }
    return keys;
  };
  const declared = (name: string): Set<string> => declaredIn(defs[name] ?? {});
  const undeclared = (name: string, value: Json) => {
    const keys = declared(name);
    return Object.keys(value).filter((k) => !keys.has(k));
  };
  const undeclaredParams = (method: string, params: Json) => {
    const def = defs[methodDefs.get(method) ?? ""];
    const schema = ((def?.properties ?? {}) as Record<string, Json>).params;
    if (!schema) return [];
    const keys = declaredIn(schema);
    return Object.keys(params).filter((k) => !keys.has(k));
  };
  const resultDef = (method: string) => resultDefs.get(method);
  return { version, defs, check, checkDef, resultDef, undeclared, undeclaredParams };
}

let loaded: Promise<Map<string, SpecSchema>> | undefined;

/**
 * The spec schemas of the four versions, loaded once per test process.
 *
 * @returns The schemas, by version.
 *
 * @example
 * ```ts ignore
 * import assert from "node:assert/strict";
 * import { specSchemas } from "./spec_schemas.ts";
 * const spec = (await specSchemas()).get("2025-11-25")!;
 * assert.deepEqual(spec.check({ jsonrpc: "2.0", id: 1, result: {} }, "ping"), []);
 * ```
 */
export function specSchemas(): Promise<Map<string, SpecSchema>> {
  loaded ??= readBundle().then((raw) =>
    new Map(VERSIONS.map((version) => [version, compile(version, raw[version])]))
  );
  return loaded;
}
