// Type expectations for defineServer and defineTool, checked by `deno check`
// / `deno test`: handlers written inline get their arguments from the schema
// (zod, valibot, arktype, JSON Schema `as const`), and every `@ts-expect-error`
// fails the check if the misuse it marks stops being an error.
import { z } from "zod";
import * as v from "valibot";
import { type } from "arktype";
import { defineServer, defineTool, type ToolDefinition } from "@anubis/core";

const weather = z.object({ city: z.string(), days: z.number().int().default(1) });
const celsius = z.object({ celsius: z.number() });
const forecastSchema = {
  type: "object",
  properties: { city: { type: "string" }, unit: { enum: ["c", "f"] } },
  required: ["city"],
} as const;

// A tool defined on its own, inferred the same way.
const forecast = defineTool({
  name: "forecast",
  inputSchema: forecastSchema,
  handler: ({ city, unit }) => `${city.toUpperCase()} in °${unit ?? "c"}`,
});
// @ts-expect-error a JSON Schema property that is not there
defineTool({ name: "bad", inputSchema: forecastSchema, handler: ({ town }) => town });
defineTool({
  name: "bad",
  inputSchema: forecastSchema,
  // @ts-expect-error unit is "c" | "f"
  handler: ({ unit }) => unit === "k" ? "kelvin" : "ok",
});
defineTool({
  name: "bad",
  inputSchema: weather,
  // @ts-expect-error an annotation that contradicts the schema
  handler: ({ city }: { city: number }) => `${city}`,
});

const legacy: ToolDefinition<never>[] = [defineTool({
  name: "annotated",
  inputSchema: { type: "object" } as { [key: string]: unknown },
  handler: ({ text }: { text: string }) => text, // a widened schema keeps the annotation
})];

const listed = defineServer({ name: "listed", version: "1.0.0", tools: [forecast, ...legacy] });

// No tool with an outputSchema: a mixed list still infers every inputSchema.
const plain = defineServer({
  name: "plain",
  version: "1.0.0",
  tools: [
    forecast,
    { name: "zod", inputSchema: weather, handler: ({ city, days }) => `${city}${days}` },
    { name: "valibot", inputSchema: v.object({ n: v.number() }), handler: ({ n }) => `${n + 1}` },
    { name: "arktype", inputSchema: type({ s: "string" }), handler: ({ s }) => s.trim() },
    {
      name: "json",
      inputSchema: { type: "object", properties: { b: { type: "boolean" } }, required: ["b"] },
      handler: ({ b }) => ({ content: [], structuredContent: { b: !b } }),
    },
    { name: "none", handler: (args) => JSON.stringify(args) },
    // @ts-expect-error wrong argument name (zod) with no outputSchema anywhere
    { name: "e", inputSchema: weather, handler: ({ town }) => town },
  ],
});

// defineTool with an array in structuredContent (a const context made it readonly).
defineTool({
  name: "list",
  outputSchema: z.object({ list: z.array(z.string()) }),
  handler: () => ({ content: [], structuredContent: { list: ["a"] } }),
});

export const server = defineServer({
  name: "typed",
  version: "1.0.0",
  tools: [
    forecast,
    defineTool({
      name: "zod",
      inputSchema: weather,
      outputSchema: celsius,
      handler: ({ city, days }) => ({
        content: [{ type: "text", text: `${city.length * days}` }],
        structuredContent: { celsius: days },
      }),
    }),
    {
      name: "valibot",
      inputSchema: v.object({ city: v.string(), tags: v.array(v.string()) }),
      handler: ({ city, tags }) => [city, ...tags].join(","),
    },
    {
      name: "arktype",
      inputSchema: type({ city: "string", "days?": "number" }),
      handler: ({ city, days }) => `${city}${days?.toFixed() ?? ""}`,
    },
    defineTool({
      name: "json",
      inputSchema: {
        type: "object",
        properties: { n: { type: "integer" }, list: { type: "array", items: { type: "string" } } },
        required: ["n", "list"],
      },
      outputSchema: { type: "object", properties: { sum: { type: "number" } }, required: ["sum"] },
      handler: ({ n, list }) => ({ content: [], structuredContent: { sum: n + list.length } }),
    }),
    { name: "none", handler: (args) => JSON.stringify(args) },
    // @ts-expect-error wrong argument name (zod)
    { name: "e1", inputSchema: weather, handler: ({ town }) => town },
    {
      name: "e2",
      inputSchema: v.object({ city: v.string() }),
      // @ts-expect-error wrong type (valibot): city is a string
      handler: ({ city }) => city.toFixed(),
    },
    {
      name: "e3",
      inputSchema: type({ city: "string" }),
      // @ts-expect-error annotation missing nothing but contradicting (arktype)
      handler: ({ city }: { city: boolean }) => `${city}`,
    },
    defineTool({
      name: "e4",
      outputSchema: celsius,
      // @ts-expect-error structuredContent of the wrong type
      handler: () => ({ content: [], structuredContent: { celsius: "21" } }),
    }),
    // Written inline, an outputSchema types structuredContent too (zod,
    // valibot, arktype, JSON Schema), and an array in it stays mutable.
    {
      name: "zod-out",
      inputSchema: weather,
      outputSchema: z.object({ celsius: z.number(), tags: z.array(z.string()) }),
      handler: ({ city, days }) => ({
        content: [],
        structuredContent: { celsius: city.length * days, tags: ["a"] },
      }),
    },
    {
      name: "valibot-out",
      outputSchema: v.object({ city: v.string() }),
      handler: async () => ({
        content: [],
        structuredContent: { city: await Promise.resolve("Oslo") },
      }),
    },
    {
      name: "arktype-out",
      inputSchema: type({ city: "string" }),
      outputSchema: type({ length: "number" }),
      handler: ({ city }) => ({ content: [], structuredContent: { length: city.length } }),
    },
    {
      name: "json-out",
      outputSchema: {
        type: "object",
        properties: { list: { type: "array", items: { type: "string" } } },
        required: ["list"],
      },
      handler: () => ({ content: [], structuredContent: { list: ["a", "b"] } }),
    },
    {
      name: "e8",
      inputSchema: weather,
      outputSchema: celsius,
      // @ts-expect-error structuredContent of the wrong type (zod, inline)
      handler: ({ city }) => ({ content: [], structuredContent: { celsius: city } }),
    },
    {
      name: "e9",
      outputSchema: v.object({ city: v.string() }),
      // @ts-expect-error structuredContent of the wrong type (valibot, inline)
      handler: () => ({ content: [], structuredContent: { city: 1 } }),
    },
    {
      name: "e10",
      inputSchema: type({ city: "string" }),
      outputSchema: type({ length: "number" }),
      // @ts-expect-error structuredContent of the wrong type (arktype, inline)
      handler: ({ city }) => ({ content: [], structuredContent: { length: city } }),
    },
    {
      name: "e11",
      outputSchema: { type: "object", properties: { sum: { type: "number" } }, required: ["sum"] },
      // @ts-expect-error structuredContent missing a required property (JSON Schema, inline)
      handler: () => ({ content: [], structuredContent: { total: 1 } }),
    },
    // Without an outputSchema, structuredContent is anything.
    { name: "free", handler: () => ({ content: [], structuredContent: { any: ["thing"] } }) },
    // @ts-expect-error a property no tool has
    { name: "e12", handler: () => "", outputschema: celsius },
    defineTool({
      name: "e5",
      outputSchema: { type: "object", properties: { sum: { type: "number" } }, required: ["sum"] },
      // @ts-expect-error structuredContent missing a required property (JSON Schema)
      handler: () => ({ content: [], structuredContent: {} }),
    }),
  ],
  prompts: [
    {
      name: "greet",
      arguments: [{ name: "name", required: true }, { name: "style" }],
      handler: ({ name, style }) => [{
        role: "user",
        content: { type: "text", text: `Greet ${name.toUpperCase()} ${style ?? ""}` },
      }],
    },
    {
      name: "e6",
      arguments: [{ name: "name" }],
      // @ts-expect-error an optional argument may be undefined
      handler: ({ name }) => [{ role: "user", content: { type: "text", text: name.trim() } }],
    },
  ],
  resourceTemplates: [
    { uriTemplate: "notes://{id}/{+path}", name: "note", read: (_uri, { id, path }) => id + path },
    // @ts-expect-error the variable is id
    { uriTemplate: "notes://{id}", name: "e7", read: (_uri, { name }) => name },
  ],
});

Deno.test("a typed definition is a server", () => {
  if (listed.tools.size !== 2 || plain.tools.size !== 7) throw new Error("unexpected");
  if (server.tools.size !== 21 || !server.prompts.has("greet")) throw new Error("unexpected");
});
