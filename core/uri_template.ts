/**
 * RFC 6570 URI templates, levels 1 and 2 (`{var}`, `{+var}`, `{#var}`):
 * expansion, and matching a URI back to its variables.
 *
 * @module
 */

type Part = { literal: string } | { name: string; operator: "" | "+" | "#" };

/**
 * A parsed URI template.
 *
 * @example
 * ```ts
 * import { UriTemplate } from "@anubis/core";
 * import assert from "node:assert/strict";
 * const template = new UriTemplate("test://template/{id}/data");
 * assert.deepEqual(template.match("test://template/123/data"), { id: "123" });
 * assert.equal(template.expand({ id: "a b" }), "test://template/a%20b/data");
 * ```
 */
export class UriTemplate {
  /**
   * The template text.
   *
   * @example
   * ```ts
   * import { UriTemplate } from "@anubis/core";
   * import assert from "node:assert/strict";
   * assert.equal(new UriTemplate("notes://{id}").template, "notes://{id}");
   * ```
   */
  readonly template: string;
  /**
   * The variable names, in order.
   *
   * @example
   * ```ts
   * import { UriTemplate } from "@anubis/core";
   * import assert from "node:assert/strict";
   * assert.deepEqual(new UriTemplate("files://{+path}{#section}").variables, [ "path", "section" ]);
   * ```
   */
  readonly variables: readonly string[];
  #parts: Part[];
  #pattern: RegExp;

  /**
   * Parses a template.
   *
   * @param template The template text.
   * @throws {TypeError} When the template uses operators beyond level 2 or is malformed.
   */
  constructor(template: string) {
    this.template = template;
    this.#parts = parse(template);
    this.variables = this.#parts.flatMap((p) => ("name" in p ? [p.name] : []));
    this.#pattern = new RegExp(
      "^" +
        this.#parts.map((p) => {
          if ("literal" in p) return escapeRegExp(p.literal);
          // Simple expansion cannot contain reserved characters such as "/";
          // reserved and fragment expansion may.
          if (p.operator === "") return "([^/?#&]*)";
          return p.operator === "#" ? "#(.*)" : "(.*)";
        }).join("") + "$",
    );
  }

  /**
   * Expands the template with the given variables.
   *
   * @param variables Variable values; missing ones expand to nothing.
   * @returns The URI.
   *
   * @example
   * ```ts
   * import { UriTemplate } from "@anubis/core";
   * import assert from "node:assert/strict";
   * const template = new UriTemplate("files://{+path}{#section}");
   * assert.equal(
   *   template.expand({ path: "docs/read me.md", section: "intro" }),
   *   "files://docs/read%20me.md#intro",
   * );
   * assert.equal(new UriTemplate("notes://{id}").expand({ id: "a/b" }), "notes://a%2Fb");
   * assert.equal(new UriTemplate("notes://{id}").expand({}), "notes://");
   * ```
   */
  expand(variables: Record<string, string | number | boolean | undefined>): string {
    return this.#parts.map((p) => {
      if ("literal" in p) return p.literal;
      const value = variables[p.name];
      if (value === undefined) return "";
      const text = String(value);
      const encoded = p.operator === "" ? encodeURIComponent(text) : encodeURI(text);
      return p.operator === "#" ? `#${encoded}` : encoded;
    }).join("");
  }

  /**
   * Matches a URI against the template.
   *
   * @param uri The URI.
   * @returns The decoded variables, or `undefined` when the URI does not match.
   *
   * @example
   * ```ts
   * import { UriTemplate } from "@anubis/core";
   * import assert from "node:assert/strict";
   * const template = new UriTemplate("notes://{id}");
   * assert.deepEqual(template.match("notes://my%20note"), { id: "my note" });
   * assert.equal(template.match("notes://a/b"), undefined);
   * assert.deepEqual(new UriTemplate("files://{+path}").match("files://a/b.md"), { path: "a/b.md" });
   * ```
   */
  match(uri: string): Record<string, string> | undefined {
    const found = this.#pattern.exec(uri);
    if (!found) return undefined;
    const variables: Record<string, string> = {};
    for (let i = 0; i < this.variables.length; i++) {
      try {
        variables[this.variables[i]] = decodeURIComponent(found[i + 1]);
      } catch {
        return undefined;
      }
    }
    return variables;
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function parse(template: string): Part[] {
  const parts: Part[] = [];
  let rest = template;
  while (rest.length > 0) {
    const open = rest.indexOf("{");
    if (open === -1) {
      if (rest.includes("}")) throw new TypeError(`Malformed URI template: ${template}`);
      parts.push({ literal: rest });
      break;
    }
    if (open > 0) parts.push({ literal: rest.slice(0, open) });
    const close = rest.indexOf("}", open);
    if (close === -1) throw new TypeError(`Malformed URI template: ${template}`);
    let expression = rest.slice(open + 1, close);
    let operator: "" | "+" | "#" = "";
    if (expression.startsWith("+") || expression.startsWith("#")) {
      operator = expression[0] as "+" | "#";
      expression = expression.slice(1);
    }
    if (!/^[A-Za-z0-9_]+$/.test(expression)) {
      throw new TypeError(
        `URI template expression {${
          rest.slice(open + 1, close)
        }} is not supported (levels 1-2 only)`,
      );
    }
    parts.push({ name: expression, operator });
    rest = rest.slice(close + 1);
  }
  return parts;
}
