// Type expectations for core/infer.ts, checked by `deno check` / `deno test`:
// every `@ts-expect-error` fails the check if the misuse stops being an error.
import { z } from "zod";
import * as v from "valibot";
import { type } from "arktype";
import type {
  FromJsonSchema,
  InferOutput,
  InferSchema,
  PromptArgs,
  UriVariables,
} from "../../core/infer.ts";

const zodArgs: InferSchema<typeof zodSchema> = { city: "Paris" };
const zodSchema = z.object({ city: z.string(), days: z.number().optional() });
// @ts-expect-error city must be a string
const zodWrong: InferSchema<typeof zodSchema> = { city: 1 };

const valibotSchema = v.object({ city: v.string() });
const valibotArgs: InferSchema<typeof valibotSchema> = { city: "Paris" };
// @ts-expect-error city is required
const valibotMissing: InferSchema<typeof valibotSchema> = {};

const arkSchema = type({ city: "string" });
const arkArgs: InferSchema<typeof arkSchema> = { city: "Paris" };
// @ts-expect-error wrong argument name
const arkWrong: InferSchema<typeof arkSchema> = { town: "Paris" };

const json = {
  type: "object",
  properties: {
    city: { type: "string" },
    unit: { enum: ["c", "f"] },
    days: { type: "array", items: { type: "integer" } },
    where: { type: "object", properties: { lat: { type: "number" } }, required: ["lat"] },
  },
  required: ["city"],
} as const;
const jsonArgs: FromJsonSchema<typeof json> = {
  city: "P",
  unit: "c",
  days: [1],
  where: { lat: 1 },
};
// @ts-expect-error unit is an enum
const jsonWrongEnum: FromJsonSchema<typeof json> = { city: "P", unit: "k" };
// @ts-expect-error city is required
const jsonMissing: InferSchema<typeof json> = { unit: "c" };

const noOutput: InferOutput<undefined> = "anything";
const promptArgs: PromptArgs<readonly [{ name: "city"; required: true }]> = { city: "P" };
// @ts-expect-error city is required
const promptMissing: PromptArgs<readonly [{ name: "city"; required: true }]> = {};
const vars: UriVariables<"notes://{id}"> = { id: "1" };
// @ts-expect-error the variable is id
const varsWrong: UriVariables<"notes://{id}"> = { name: "1" };

Deno.test("inferred types are the schemas' types", () => {
  const all = [zodArgs, zodWrong, valibotArgs, valibotMissing, arkArgs, arkWrong, jsonArgs];
  const more = [jsonWrongEnum, jsonMissing, noOutput, promptArgs, promptMissing, vars, varsWrong];
  if (all.length + more.length !== 14) throw new Error("unexpected");
});
