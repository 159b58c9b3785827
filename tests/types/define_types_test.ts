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
  if (listed.tools.size !== 2) throw new Error("unexpected");
  if (server.tools.size !== 11 || !server.prompts.has("greet")) throw new Error("unexpected");
});
