/**
 * A server whose tools are written with zod 4, valibot 1, arktype 2 and a
 * JSON Schema literal, handlers unannotated: what the schema-library tests
 * serve over stdio and HTTP. Two more: `json_default`, whose JSON Schema
 * names a `default` (listed as written, and filled in by the server when the
 * client leaves the argument out, so the handler's `days` is a number), and
 * `measure`, whose output violates its `outputSchema` when asked to.
 *
 * @module
 */

import { z } from "zod";
import * as v from "valibot";
import { type } from "arktype";
import { defineServer } from "@anubis/core";

export default defineServer({
  name: "schema-libraries",
  version: "1.0.0",
  tools: [
    {
      name: "zod",
      inputSchema: z.object({ city: z.string(), days: z.number().int().default(2) }),
      handler: ({ city, days }) => `${city.toUpperCase()} for ${days} days`,
    },
    {
      name: "valibot",
      inputSchema: v.object({ city: v.string(), days: v.optional(v.number(), 3) }),
      handler: ({ city, days }) => `${city.toUpperCase()} for ${days} days`,
    },
    {
      name: "arktype",
      inputSchema: type({ city: "string", days: "number = 4" }),
      handler: ({ city, days }) => `${city.toUpperCase()} for ${days} days`,
    },
    {
      name: "json",
      inputSchema: {
        type: "object",
        properties: { city: { type: "string" }, days: { type: "integer" } },
        required: ["city"],
      },
      handler: ({ city, days }) => `${city.toUpperCase()} for ${days ?? 5} days`,
    },
    {
      name: "json_default",
      inputSchema: {
        type: "object",
        properties: { city: { type: "string" }, days: { type: "integer", default: 6 } },
        required: ["city"],
      },
      // `days` is a number: the server fills in the default when the client leaves it out.
      handler: ({ city, days }) => `${city.toUpperCase()} for ${days.toFixed(0)} days`,
    },
    {
      name: "measure",
      inputSchema: z.object({ broken: z.boolean().default(false) }),
      outputSchema: {
        type: "object",
        properties: { celsius: { type: "number" } },
        required: ["celsius"],
      },
      handler: ({ broken }) => ({
        content: [{ type: "text", text: "measured" }],
        // A server bug the types refuse, forced through: a string where a number is declared.
        structuredContent: broken ? { celsius: "warm" } as never : { celsius: 21 },
      }),
    },
  ],
});
