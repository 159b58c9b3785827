// The structure's bar, checked on every published workspace member (a
// deno.json with `name` and `exports`):
//
// - no entry point re-exports a whole module (`export *`): what a package
//   publishes is named symbol by symbol;
// - privacy is visible: every shipped file that no entry point reaches by
//   re-export is private by name (`_`-prefixed, or inside a `_` folder);
// - no import cycle inside a package, type-only imports included;
// - `@anubis/core` is only the protocol: no import map of its own and no
//   run-time import of npm or `node:` specifiers, nor a static import of a
//   bare one (an optional peer the application maps, such as ajv, is loaded
//   with `import()` the first time it is used).
//
// The checks read import and export statements at the start of a line once
// comments and template literals are blanked, so an import in a JSDoc example
// or in a template is not one (deno fmt puts every statement there). A
// fixture package with one of each fault proves every check can fail.
import assert from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url);

/** One import or re-export edge of a source file. */
interface Edge {
  /** The specifier as written. */
  specifier: string;
  /** `import type`, or every named binding marked `type`. */
  typeOnly: boolean;
  /** A re-export (`export … from`, or an imported name exported again). */
  reexport: boolean;
  /** `export * from` (not `export * as ns from`). */
  star: boolean;
  /** `import("…")`: loaded when first used. */
  dynamic?: boolean;
}

/**
 * The source with comments and template literals blanked (newlines kept), so
 * that what is left at the start of a line is code: an import in a JSDoc
 * example or in a template (`cli init`'s files) is no edge. Quoted strings
 * stay, since specifiers are strings; one cannot span lines.
 */
function codeOf(text: string): string {
  let out = "";
  let i = 0;
  const blank = (end: number) => {
    out += text.slice(i, end).replace(/[^\n]/g, " ");
    i = end;
  };
  while (i < text.length) {
    const c = text[i];
    const next = text[i + 1];
    if (c === "/" && next === "/") {
      const end = text.indexOf("\n", i);
      blank(end === -1 ? text.length : end);
    } else if (c === "/" && next === "*") {
      const end = text.indexOf("*/", i + 2);
      blank(end === -1 ? text.length : end + 2);
    } else if (c === "`") {
      let j = i + 1;
      let depth = 0;
      while (j < text.length) {
        if (text[j] === "\\") j += 2;
        else if (depth === 0 && text[j] === "`") break;
        else if (text[j] === "$" && text[j + 1] === "{") (depth++, j += 2);
        else if (depth > 0 && text[j] === "}") (depth--, j++);
        else j++;
      }
      blank(Math.min(j + 1, text.length));
    } else if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < text.length && text[j] !== c && text[j] !== "\n") j += text[j] === "\\" ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** The local names an import clause binds (`a`, `{ b as c, type d }`, `* as e`). */
function boundNames(clause: string): string[] {
  const names: string[] = [];
  const braces = clause.match(/\{([^}]*)\}/);
  if (braces) {
    for (const part of braces[1].split(",")) {
      const words = part.trim().replace(/^type\s+/, "").split(/\s+as\s+/);
      const name = words[words.length - 1].trim();
      if (name) names.push(name);
    }
  }
  const outside = clause.replace(/\{[^}]*\}/, "").replace(/^\s*type\s+/, "");
  for (const part of outside.split(",")) {
    const word = part.trim().replace(/^\*\s+as\s+/, "");
    if (/^[\w$]+$/.test(word)) names.push(word);
  }
  return names;
}

function allTyped(clause: string): boolean {
  if (/^\s*type\s/.test(clause)) return true;
  const braces = clause.match(/^\s*\{([^}]*)\}\s*$/);
  if (!braces) return false;
  const parts = braces[1].split(",").map((p) => p.trim()).filter((p) => p !== "");
  return parts.length > 0 && parts.every((p) => p.startsWith("type "));
}

/** The import and re-export edges of one source text. */
function edgesOf(text: string): Edge[] {
  const code = codeOf(text);
  const edges: Edge[] = [];
  const importedFrom = new Map<string, number>();
  const statement = /^(import|export)\b([^;"'`]*?)\bfrom\s*(["'])([^"'\n]+)\3/gm;
  for (const [, keyword, clause, , specifier] of code.matchAll(statement)) {
    if (keyword === "import") {
      edges.push({ specifier, typeOnly: allTyped(clause), reexport: false, star: false });
      for (const name of boundNames(clause)) importedFrom.set(name, edges.length - 1);
    } else {
      edges.push({
        specifier,
        typeOnly: allTyped(clause),
        reexport: true,
        star: clause.trim() === "*",
      });
    }
  }
  for (const [, specifier] of code.matchAll(/^import\s*["']([^"'\n]+)["']/gm)) {
    edges.push({ specifier, typeOnly: false, reexport: false, star: false });
  }
  for (const [, names] of code.matchAll(/^export\s*(?:type\s*)?\{([^}]*)\}\s*;/gm)) {
    for (const part of names.split(",")) {
      const local = part.trim().replace(/^type\s+/, "").split(/\s+as\s+/)[0].trim();
      const index = importedFrom.get(local);
      if (index !== undefined) edges[index].reexport = true;
    }
  }
  for (const [, specifier] of code.matchAll(/\bimport\(\s*["']([^"'\n]+)["']\s*\)/g)) {
    edges.push({ specifier, typeOnly: false, reexport: false, star: false, dynamic: true });
  }
  return edges;
}

/** A package as the checks see it: its files by path relative to its folder. */
interface PackageSources {
  name: string;
  /** Entry points, relative (`mod.ts`, `engine/mod.ts`). */
  entries: string[];
  /** Shipped source files (tests and testdata left out), relative path -> text. */
  files: Map<string, string>;
  /** Whether its deno.json has an `imports` map. */
  hasImportMap: boolean;
}

function resolveRelative(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith("./") && !specifier.startsWith("../")) return undefined;
  const url = new URL(specifier, new URL(from, "file:///pkg/"));
  if (!url.pathname.startsWith("/pkg/")) return undefined; // outside the package
  return url.pathname.slice("/pkg/".length);
}

function isPrivatePath(path: string): boolean {
  return path.split("/").some((part) => part.startsWith("_"));
}

/** Strongly connected components with more than one file (Tarjan). */
function cycles(graph: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const connect = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter);
    counter++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      const selfLoop = (graph.get(v) ?? []).includes(v);
      if (component.length > 1 || selfLoop) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) connect(v);
  return found;
}

/** Every fault of one package against the structure's bar. */
function structureFaults(pkg: PackageSources, opts: { pure?: boolean } = {}): string[] {
  const faults: string[] = [];
  const edges = new Map<string, Edge[]>();
  for (const [path, text] of pkg.files) edges.set(path, edgesOf(text));

  for (const entry of pkg.entries) {
    for (const edge of edges.get(entry) ?? []) {
      if (edge.star) faults.push(`${pkg.name}: ${entry} has \`export * from "${edge.specifier}"\``);
    }
  }

  const reached = new Set<string>(pkg.entries);
  const queue = [...pkg.entries];
  while (queue.length > 0) {
    const path = queue.pop()!;
    for (const edge of edges.get(path) ?? []) {
      if (!edge.reexport) continue;
      const target = resolveRelative(path, edge.specifier);
      if (target && pkg.files.has(target) && !reached.has(target)) {
        reached.add(target);
        queue.push(target);
      }
    }
  }
  for (const path of pkg.files.keys()) {
    if (!reached.has(path) && !isPrivatePath(path)) {
      faults.push(`${pkg.name}: ${path} is reached by no entry point and is not \`_\`-private`);
    }
  }

  const graph = new Map<string, string[]>();
  for (const [path, list] of edges) {
    graph.set(
      path,
      list.map((e) => resolveRelative(path, e.specifier)).filter((t): t is string =>
        t !== undefined && pkg.files.has(t)
      ),
    );
  }
  for (const component of cycles(graph)) {
    faults.push(`${pkg.name}: import cycle ${component.join(" -> ")}`);
  }

  if (opts.pure) {
    if (pkg.hasImportMap) faults.push(`${pkg.name}: deno.json has an import map`);
    for (const [path, list] of edges) {
      for (const edge of list) {
        const s = edge.specifier;
        const scheme = s.startsWith("npm:") || s.startsWith("node:") || s.startsWith("jsr:");
        const bare = !scheme &&
          !(s.startsWith(".") || s.startsWith("/") || s.startsWith("@anubis/"));
        // A bare specifier loaded with import() is an optional peer the
        // application maps (ajv, @valibot/to-json-schema), fetched only when used.
        if ((scheme || (bare && !edge.dynamic)) && !edge.typeOnly) {
          faults.push(`${pkg.name}: ${path} imports "${s}" at run time`);
        }
      }
    }
  }
  return faults;
}

async function walk(dir: URL, prefix = ""): Promise<string[]> {
  const out: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const rel = prefix + entry.name;
    if (entry.isDirectory) {
      if (entry.name === "testdata" || entry.name === "node_modules") continue;
      out.push(...await walk(new URL(entry.name + "/", dir), rel + "/"));
    } else if (
      /\.(ts|tsx|mts)$/.test(entry.name) && !/_test\.tsx?$/.test(entry.name) &&
      !entry.name.endsWith(".d.ts")
    ) {
      out.push(rel);
    }
  }
  return out;
}

async function workspacePackages(): Promise<PackageSources[]> {
  const root = JSON.parse(await Deno.readTextFile(new URL("deno.json", ROOT)));
  const packages: PackageSources[] = [];
  for (const member of root.workspace as string[]) {
    const dir = new URL(member.replace(/^\.\//, "") + "/", ROOT);
    const config = JSON.parse(await Deno.readTextFile(new URL("deno.json", dir)));
    if (!config.name || !config.exports) continue;
    const exports = typeof config.exports === "string"
      ? [config.exports]
      : Object.values(config.exports as Record<string, string>);
    const files = new Map<string, string>();
    for (const path of await walk(dir)) {
      files.set(path, await Deno.readTextFile(new URL(path, dir)));
    }
    packages.push({
      name: config.name,
      entries: exports.map((e) => e.replace(/^\.\//, "")),
      files,
      hasImportMap: config.imports !== undefined && Object.keys(config.imports).length > 0,
    });
  }
  return packages;
}

Deno.test("structure: every published package meets the bar", async () => {
  const packages = await workspacePackages();
  assert.ok(packages.length >= 8, `only ${packages.length} packages found`);
  const faults = packages.flatMap((pkg) =>
    structureFaults(pkg, { pure: pkg.name === "@anubis/core" })
  );
  assert.deepEqual(faults, []);
});

Deno.test("structure: the checks catch each fault (a fixture package)", () => {
  const pkg: PackageSources = {
    name: "@fixture/bad",
    entries: ["mod.ts"],
    hasImportMap: true,
    files: new Map([
      [
        "mod.ts",
        [
          `export * from "./star.ts";`,
          `export { a } from "./a.ts";`,
          `import { c } from "./_c.ts";`,
          `export { c };`,
          `// import { fake } from "./commented.ts";`,
        ].join("\n"),
      ],
      ["star.ts", `export const s = 1;`],
      ["a.ts", `import type { B } from "./b.ts";\nexport const a: B = 1;`],
      ["b.ts", `import type { a } from "./a.ts";\nexport type B = typeof a;`],
      ["_c.ts", `import x from "npm:left-pad";\nexport const c = x;`],
      ["_e.ts", `import y from "left-pad";\nexport const e = () => [y, import("peer")];`],
      ["_d.ts", `import type { X } from "node:fs";\nexport type D = X;`],
      ["orphan.ts", `export const o = await import("node:os");`],
      [
        "_f.ts",
        [
          "/*",
          `import a from "npm:in-a-comment";`,
          "*/",
          "export const file = `",
          `import b from "npm:in-a-template";`,
          "${1 + 1}`;",
          `export const quote = "import c from 'npm:in-a-string'";`,
        ].join("\n"),
      ],
    ]),
  };
  const faults = structureFaults(pkg, { pure: true });
  assert.deepEqual(
    faults.sort(),
    [
      `@fixture/bad: _c.ts imports "npm:left-pad" at run time`,
      `@fixture/bad: _e.ts imports "left-pad" at run time`,
      `@fixture/bad: b.ts is reached by no entry point and is not \`_\`-private`,
      `@fixture/bad: deno.json has an import map`,
      `@fixture/bad: import cycle a.ts -> b.ts`,
      `@fixture/bad: mod.ts has \`export * from "./star.ts"\``,
      `@fixture/bad: orphan.ts imports "node:os" at run time`,
      `@fixture/bad: orphan.ts is reached by no entry point and is not \`_\`-private`,
    ].sort(),
  );
});
