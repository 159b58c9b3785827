/**
 * Types inferred from schemas written inline: a tool's arguments and
 * structured output from its `inputSchema`/`outputSchema` (Standard Schema's
 * output type, or a JSON Schema literal), a prompt's arguments from its
 * `arguments`, and a resource template's variables from its URI template.
 * Types only: nothing here runs.
 *
 * @module
 */

import type { JsonSchema } from "./json_schema.ts";

type Simplify<T> = { [K in keyof T]: T[K] } & unknown;

type JsonPrimitive<T> = T extends "string" ? string
  : T extends "number" | "integer" ? number
  : T extends "boolean" ? boolean
  : T extends "null" ? null
  : T extends "array" ? unknown[]
  : T extends "object" ? Record<string, unknown>
  : unknown;

type Depth = [never, 0, 1, 2, 3, 4, 5, 6, 7];

type FromProperties<P, R, D extends number> = Simplify<
  & { -readonly [K in keyof P & R]: FromJsonSchema<P[K], D> }
  & { -readonly [K in Exclude<keyof P, R>]?: FromJsonSchema<P[K], D> }
>;

/**
 * The type a JSON Schema literal (written `as const`, or inline where a
 * server infers it) describes: `type` (one or a list), `enum`, `const`,
 * `properties` with `required`, `items`, and `anyOf`/`oneOf`. A schema
 * typed only as {@link JsonSchema} (not a literal) gives `never`, so a
 * handler's own annotation is taken as it is.
 *
 * @example
 * ```ts
 * import type { FromJsonSchema } from "./infer.ts";
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
  : S extends { readonly anyOf: readonly (infer A)[] } ? FromJsonSchema<A, Depth[D]>
  : S extends { readonly oneOf: readonly (infer A)[] } ? FromJsonSchema<A, Depth[D]>
  : S extends { readonly type: "array"; readonly items: infer I } ? FromJsonSchema<I, Depth[D]>[]
  : S extends { readonly properties: infer P } ? FromProperties<
      P,
      S extends { readonly required: readonly (infer R)[] } ? R : never,
      Depth[D]
    >
  : S extends { readonly type: readonly (infer T)[] } ? JsonPrimitive<T>
  : S extends { readonly type: infer T } ? JsonPrimitive<T>
  : unknown;

/**
 * The value type a tool schema validates to: a Standard Schema's output type
 * (zod 4, valibot 1, arktype 2…), the type of a JSON Schema literal, or
 * `Record<string, unknown>` when there is no schema.
 *
 * @example
 * ```ts
 * import type { InferSchema } from "./infer.ts";
 * import type { StandardSchemaV1 } from "./json_schema.ts";
 * type N = InferSchema<StandardSchemaV1<number>>;
 * const n: N = 1;
 * if (n !== 1) throw new Error("unexpected");
 * ```
 */
export type InferSchema<S> = unknown extends S ? Record<string, unknown>
  : [S] extends [undefined] ? Record<string, unknown>
  : S extends { readonly "~standard": infer Std } ? StandardOutput<Std>
  : S extends JsonSchema ? FromJsonSchema<S>
  : never;

// A Standard Schema's declared output type, or the value its `validate` returns.
type StandardOutput<Std> = Std extends { readonly types?: infer T }
  ? NonNullable<T> extends { readonly output: infer O } ? O : ValidatedValue<Std>
  : ValidatedValue<Std>;
type ValidatedValue<Std> = Std extends { readonly validate: (value: unknown) => infer R }
  ? Extract<Awaited<R>, { readonly value: unknown }>["value"]
  : unknown;

/**
 * Like {@link InferSchema}, for an `outputSchema`: `unknown` when there is none.
 *
 * @example
 * ```ts
 * import type { InferOutput } from "./infer.ts";
 * const out: InferOutput<{ readonly type: "number" }> = 3;
 * if (out !== 3) throw new Error("unexpected");
 * ```
 */
export type InferOutput<S> = unknown extends S ? unknown
  : [S] extends [undefined] ? unknown
  : InferSchema<S>;

type Names<A> = A extends { readonly name: infer N extends string } ? N : never;
type RequiredNames<A> = A extends { readonly required: true } ? Names<A> : never;

/**
 * The arguments of a prompt handler from its `arguments`: each named one a
 * string, optional unless `required: true`.
 *
 * @example
 * ```ts
 * import type { PromptArgs } from "./infer.ts";
 * type A = PromptArgs<readonly [{ name: "city"; required: true }, { name: "style" }]>;
 * const args: A = { city: "Paris" };
 * if (args.style !== undefined) throw new Error("unexpected");
 * ```
 */
export type PromptArgs<A> = unknown extends A ? Record<string, string>
  : A extends readonly (infer E)[] ? string extends Names<E> ? Record<string, string>
    : Simplify<
      & { [K in RequiredNames<E>]: string }
      & { [K in Exclude<Names<E>, RequiredNames<E>>]?: string }
    >
  : Record<string, string>;

type StripModifier<N> = N extends `${infer V}*` ? V : N extends `${infer V}:${string}` ? V : N;
type SplitNames<N> = N extends `${infer A},${infer B}` ? StripModifier<A> | SplitNames<B>
  : StripModifier<N>;
type ExpressionNames<E> = E extends `${"+" | "#" | "." | "/" | ";" | "?" | "&"}${infer N}`
  ? SplitNames<N>
  : SplitNames<E>;
type TemplateNames<T> = T extends `${string}{${infer E}}${infer Rest}`
  ? ExpressionNames<E> | TemplateNames<Rest>
  : never;

/**
 * The variables of an RFC 6570 URI template: `"notes://{id}"` gives
 * `{ id: string }`.
 *
 * @example
 * ```ts
 * import type { UriVariables } from "./infer.ts";
 * const vars: UriVariables<"files://{+path}{?rev}"> = { path: "a/b", rev: "1" };
 * if (vars.path !== "a/b") throw new Error("unexpected");
 * ```
 */
export type UriVariables<T> = string extends T ? Record<string, string>
  : { [K in TemplateNames<T>]: string };
