/**
 * Types inferred from schemas written inline: a tool's arguments and
 * structured output from its `inputSchema`/`outputSchema` (Standard Schema's
 * output type, or a JSON Schema literal), a prompt's arguments from its
 * `arguments`, and a resource template's variables from its URI template.
 * Types only: nothing here runs. Exported from `@anubis/core`.
 *
 * @module
 */

import type { JsonSchema } from "./json_schema.ts";

/**
 * The type a JSON Schema literal (written `as const`, or inline where a
 * server infers it) describes: `type` (one or a list), `enum`, `const`,
 * `properties` with `required` (a property with a `default` is present too:
 * the server fills it in), `items`, and `anyOf`/`oneOf`. A schema
 * typed only as {@link JsonSchema} (not a literal) gives `never`, so a
 * handler's own annotation is taken as it is.
 *
 * @example
 * ```ts
 * import type { FromJsonSchema } from "@anubis/core";
 * const schema = {
 *   type: "object",
 *   properties: { city: { type: "string" }, days: { type: "integer" } },
 *   required: ["city"],
 * } as const;
 * const args: FromJsonSchema<typeof schema> = { city: "Paris" };
 * if (args.city !== "Paris" || args.days !== undefined) throw new Error("unexpected");
 * ```
 */
export type FromJsonSchema<S, D extends number = 8> = [D] extends [never] ? unknown
  : string extends keyof S ? never
  : S extends { readonly const: infer C } ? C
  : S extends { readonly enum: readonly (infer E)[] } ? E
  : S extends { readonly anyOf: readonly (infer A)[] }
    ? FromJsonSchema<A, [never, 0, 1, 2, 3, 4, 5, 6, 7][D]>
  : S extends { readonly oneOf: readonly (infer A)[] }
    ? FromJsonSchema<A, [never, 0, 1, 2, 3, 4, 5, 6, 7][D]>
  : S extends { readonly type: "array"; readonly items: infer I }
    ? FromJsonSchema<I, [never, 0, 1, 2, 3, 4, 5, 6, 7][D]>[]
  : S extends { readonly properties: infer P }
  // Required, or given a `default` (the server fills it in): present.
    ? (
      | (S extends { readonly required: readonly (infer R)[] } ? R : never)
      | { [K in keyof P]: P[K] extends { readonly default: unknown } ? K : never }[keyof P]
    ) extends infer R ?
        & { -readonly [K in keyof P & R]: FromJsonSchema<P[K], [never, 0, 1, 2, 3, 4, 5, 6, 7][D]> }
        & {
          -readonly [K in Exclude<keyof P, R>]?: FromJsonSchema<
            P[K],
            [never, 0, 1, 2, 3, 4, 5, 6, 7][D]
          >;
        }
    : never
  : S extends { readonly type: infer T }
    ? (T extends readonly (infer E)[] ? E : T) extends infer N ? N extends "string" ? string
      : N extends "number" | "integer" ? number
      : N extends "boolean" ? boolean
      : N extends "null" ? null
      : N extends "array" ? unknown[]
      : N extends "object" ? Record<string, unknown>
      : unknown
    : never
  : unknown;

/**
 * The value type a tool schema validates to: a Standard Schema's output type
 * (zod 4, valibot 1, arktype 2…), the type of a JSON Schema literal, or
 * `Record<string, unknown>` when there is no schema. A schema typed only as
 * {@link JsonSchema} (or `JsonSchema | StandardSchemaV1`) gives `never`, so
 * the handler's own annotation is taken as it is.
 *
 * @example
 * ```ts
 * import type { InferSchema } from "@anubis/core";
 * import type { StandardSchemaV1 } from "@anubis/core";
 * type N = InferSchema<StandardSchemaV1<number>>;
 * const n: N = 1;
 * if (n !== 1) throw new Error("unexpected");
 * ```
 */
export type InferSchema<S> = unknown extends S ? Record<string, unknown>
  : [S] extends [undefined] ? Record<string, unknown>
  : JsonSchema extends S ? never
  : S extends { readonly "~standard": infer Std }
  // The declared output type, or else the value `validate` returns.
    ? Std extends { readonly types?: { readonly output: infer O } }
      ? unknown extends O
        ? Std extends { readonly validate: (value: unknown) => infer R }
          ? Extract<Awaited<R>, { readonly value: unknown }>["value"]
        : unknown
      : O
    : unknown
  : S extends JsonSchema ? FromJsonSchema<S>
  : never;

/**
 * Like {@link InferSchema}, for an `outputSchema`: `unknown` when there is none.
 *
 * @example
 * ```ts
 * import type { InferOutput } from "@anubis/core";
 * const out: InferOutput<{ readonly type: "number" }> = 3;
 * if (out !== 3) throw new Error("unexpected");
 * ```
 */
// No `unknown extends S` test first (`JsonSchema extends S` covers `unknown`):
// with it, a non-context-sensitive handler (`() => ({ structuredContent:
// { list: ["a"] } })`) was checked as a const context, its arrays readonly,
// and no longer matched a mutable `string[]` output.
export type InferOutput<S> = [S] extends [undefined] ? unknown
  : JsonSchema extends S ? unknown
  : InferSchema<S>;

/**
 * The arguments of a prompt handler from its `arguments`: each named one a
 * string, optional unless `required: true`.
 *
 * @example
 * ```ts
 * import type { PromptArgs } from "@anubis/core";
 * type A = PromptArgs<readonly [{ name: "city"; required: true }, { name: "style" }]>;
 * const args: A = { city: "Paris" };
 * if (args.style !== undefined) throw new Error("unexpected");
 * ```
 */
export type PromptArgs<A> = unknown extends A ? Record<string, string>
  : A extends readonly (infer E)[]
    ? string extends (E extends { readonly name: infer N } ? N : never) ? Record<string, string>
    :
      & {
        [
          X in E as X extends { readonly required: true; readonly name: infer N extends string } ? N
            : never
        ]: string;
      }
      & {
        [
          X in E as X extends { readonly required: true } ? never
            : X extends { readonly name: infer N extends string } ? N
            : never
        ]?: string;
      }
  : Record<string, string>;

/**
 * The variables of an RFC 6570 URI template: `"notes://{id}"` gives
 * `{ id: string }`.
 *
 * @example
 * ```ts
 * import type { UriVariables } from "@anubis/core";
 * const vars: UriVariables<"files://{+path}{?rev}"> = { path: "a/b", rev: "1" };
 * if (vars.path !== "a/b") throw new Error("unexpected");
 * ```
 */
export type UriVariables<T> = string extends T ? Record<string, string>
  : T extends `${string}{${infer E}}${infer Rest}`
  // `{a,b}` reads as `{a}{b}`; the operator and the `*`/`:n` modifiers are not names.
    ? E extends `${infer A},${infer B}` ? UriVariables<`{${A}}{${B}}${Rest}`>
    :
      & {
        [
          K in E extends `${"+" | "#" | "." | "/" | ";" | "?" | "&"}${infer N}` ? N : E as K extends
            `${infer V}*` ? V
            : K extends `${infer V}:${string}` ? V
            : K
        ]: string;
      }
      & UriVariables<Rest>
  : Record<never, string>;
