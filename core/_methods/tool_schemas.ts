/**
 * A tool's schemas compiled once per definition: the JSON Schemas it lists
 * and the validators of its arguments and structured output. `defineServer`
 * compiles every tool here; `tools/list` and `tools/call` read the cache.
 *
 * @module
 */

import { pick } from "../_objects.ts";
import {
  compileValidator,
  defaultsFiller,
  isStandardSchema,
  type JsonSchema,
  type StandardSchemaV1,
  toJsonSchema,
  type Validation,
  type Validator,
} from "../json_schema.ts";

/** The part of a tool definition its schemas are compiled from. */
export interface SchemaTool {
  readonly name: string;
  readonly inputSchema?: JsonSchema | StandardSchemaV1;
  readonly outputSchema?: JsonSchema | StandardSchemaV1;
}

export interface CompiledTool {
  // A promise while a library's JSON Schema converter loads (valibot).
  wire: Record<string, unknown> | Promise<Record<string, unknown>>;
  validateInput: Validator;
  validateOutput?: Validator;
}

const EMPTY_OBJECT_SCHEMA: JsonSchema = { type: "object", properties: {} };
const WIRE_KEYS = [
  "name",
  "title",
  "description",
  "annotations",
  "icons",
  "execution",
  "_meta",
] as const;

// A cache: compiled once per (immutable) definition object, so rewritten tools
// from `serverTools` are compiled on first sight and then reused.
const compiled = new WeakMap<SchemaTool, CompiledTool>();

export function compile(tool: SchemaTool): CompiledTool {
  let entry = compiled.get(tool);
  if (entry) return entry;
  const wire = pick(tool, WIRE_KEYS);
  const input = tool.inputSchema ? describe(tool.inputSchema) : EMPTY_OBJECT_SCHEMA;
  const output = tool.outputSchema ? describe(tool.outputSchema) : undefined;
  const finish = (input: JsonSchema, output: JsonSchema | undefined) => {
    wire.inputSchema = objectSchema(input);
    if (output) wire.outputSchema = output;
    return wire;
  };
  entry = {
    wire: input instanceof Promise || output instanceof Promise
      ? Promise.all([input, output]).then(([i, o]) => finish(i, o))
      : finish(input, output),
    validateInput: tool.inputSchema ? inputValidator(tool.inputSchema) : acceptObject,
    validateOutput: tool.outputSchema ? compileValidator(tool.outputSchema) : undefined,
  };
  compiled.set(tool, entry);
  return entry;
}

/**
 * A tool's argument validator: its schema's, and for a JSON Schema that
 * declares `default`s, the defaults filled into valid arguments (a Standard
 * Schema applies its own).
 */
function inputValidator(schema: JsonSchema | StandardSchemaV1): Validator {
  const validate = compileValidator(schema);
  const fill = isStandardSchema(schema) ? undefined : defaultsFiller(schema);
  if (!fill) return validate;
  const filled = (checked: Validation): Validation =>
    checked.ok && typeof checked.value === "object" && checked.value !== null
      ? { ok: true, value: fill(checked.value as Record<string, unknown>) }
      : checked;
  return (value) => {
    const checked = validate(value);
    return checked instanceof Promise ? checked.then(filled) : filled(checked);
  };
}

type ValibotConverter = (schema: unknown, config: { target: string }) => JsonSchema;
let valibotConverter: Promise<ValibotConverter> | undefined;

/**
 * The JSON Schema a tool lists for a schema: its own (JSON Schema, or a
 * Standard Schema with Standard JSON Schema: zod 4, arktype 2), or valibot's
 * from `@valibot/to-json-schema`, loaded the first time a valibot schema
 * needs it. Throws a TypeError for a schema nothing can describe.
 */
function describe(schema: JsonSchema | StandardSchemaV1): JsonSchema | Promise<JsonSchema> {
  if (
    isStandardSchema(schema) && !schema["~standard"].jsonSchema &&
    schema["~standard"].vendor === "valibot"
  ) {
    valibotConverter ??= import("@valibot/to-json-schema").then((m) =>
      m.toJsonSchema as unknown as ValibotConverter
    );
    return valibotConverter.then((convert) => convert(schema, { target: "draft-2020-12" }));
  }
  return toJsonSchema(schema);
}

/**
 * Compiles every tool of a server when it is defined (the listed JSON
 * Schemas, the validators), so a schema it cannot serve fails there.
 *
 * @returns A promise settled once every schema whose converter loads lazily
 *   (valibot's) is converted: it rejects with the same `TypeError` naming the
 *   tool; `undefined` when there are none.
 * @throws {TypeError} Naming the tool, for a schema it cannot serve.
 */
export function prepareTools(tools: Iterable<SchemaTool>): Promise<void> | undefined {
  const pending: Promise<unknown>[] = [];
  for (const tool of tools) {
    let entry: CompiledTool;
    try {
      entry = compile(tool);
    } catch (error) {
      throw unservable(tool, error);
    }
    if (entry.wire instanceof Promise) {
      pending.push(entry.wire.catch((error) => Promise.reject(unservable(tool, error))));
    }
  }
  return pending.length === 0 ? undefined : Promise.all(pending).then(() => {});
}

function unservable(tool: SchemaTool, error: unknown): TypeError {
  const reason = error instanceof Error ? error.message : String(error);
  return new TypeError(`Tool ${tool.name} cannot be served: ${reason}`);
}

// Every version's Tool.inputSchema requires `type: "object"`; a schema that
// leaves it out (arguments are always an object) gets it on the wire.
function objectSchema(schema: JsonSchema): JsonSchema {
  return schema.type === undefined ? { type: "object", ...schema } : schema;
}

function acceptObject(value: unknown) {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? { ok: true as const, value }
    : { ok: false as const, message: "arguments must be an object" };
}
