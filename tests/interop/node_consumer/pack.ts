/**
 * Packs every published workspace member with `deno pack` into one folder and
 * makes each tarball name the sibling `@anubis/*` packages it imports as
 * `dependencies`, so that `npm install` of the tarballs gives Node what the
 * emitted modules import.
 *
 * `deno pack` (2.9.6) records a dependency only for an import that resolves to
 * a `jsr:` or `npm:` specifier; a workspace member resolves to its folder (a
 * `file:` URL), so no sibling is recorded, and mapping the sibling to `jsr:`
 * in the member's deno.json does not change that (the workspace member still
 * wins the resolution). So this step reads what the emitted `.js` and `.d.ts`
 * import, adds each `@anubis/*` package at the version it was packed at, and
 * re-tars with the `tar` CLI.
 *
 * Usage as a script: `deno run -A tests/interop/node_consumer/pack.ts <out dir>`.
 *
 * @module
 */

import { runCommand } from "../../helpers/command.ts";

/** One packed package. */
export interface Packed {
  /** The npm name (`@anubis/core`). */
  name: string;
  /** The version it was packed at. */
  version: string;
  /** The tarball's absolute path. */
  tarball: string;
  /** The `@anubis/*` dependencies this step added (name to version). */
  added: Record<string, string>;
}

/** What `packWorkspace` made and what `deno pack` warned about. */
export interface PackResult {
  /** Every packed package, by name. */
  packages: Packed[];
  /** The modules `deno pack` could not generate types for (file URLs). */
  untyped: string[];
  /** Every other line of `deno pack`'s output that looks like a diagnostic. */
  diagnostics: string[];
}

async function run(command: string, args: string[], cwd: string): Promise<string> {
  const out = await runCommand(command, args, { cwd });
  const text = out.stdout + out.stderr;
  if (out.code !== 0) throw new Error(`${command} ${args.join(" ")} exited ${out.code}\n${text}`);
  return text;
}

// Import and export statements start a line in the emitted code, or follow the
// `*/` that ends a module's JSDoc (JSDoc example lines start with ` *`); between the keyword and `from` only names and one
// `{ … }` list may stand, so a class body's JSDoc is never read as an import.
const STATIC =
  /^(?:\s*\*\/)?\s*(?:import|export)\b(?:[^;{}"'\n]|\{[^{}]*\})*?\bfrom\s*["'](@anubis\/[\w-]+)(?:\/[^"']*)?["']/gm;
const BARE = /^(?:\s*\*\/)?\s*import\s*["'](@anubis\/[\w-]+)(?:\/[^"']*)?["']/gm;
const DYNAMIC = /^(?!\s*(?:\*|\/\/)).*?\bimport\(\s*["'](@anubis\/[\w-]+)(?:\/[^"']*)?["']\s*\)/gm;

/**
 * The `@anubis/*` package names a module's text imports (statically,
 * dynamically, or as a type), leaving out those named only in comments.
 *
 * @example
 * ```ts
 * const text = 'import { a } from "@anubis/core";\n * import("@anubis/cli")\n';
 * console.log(anubisImports(text)); // Set { "@anubis/core" }
 * ```
 */
export function anubisImports(text: string): Set<string> {
  const names = new Set<string>();
  for (const pattern of [STATIC, BARE, DYNAMIC]) {
    for (const [, name] of text.matchAll(pattern)) names.add(name);
  }
  return names;
}

async function emittedFiles(dir: string): Promise<string[]> {
  const files: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) files.push(...await emittedFiles(path));
    else if (/\.(?:m?js|d\.m?ts)$/.test(entry.name)) files.push(path);
  }
  return files;
}

const UNTYPED = /Could not generate types for '([^']+)'\. Types will not be included/;

/**
 * Packs every published member of the workspace at `root` into `outDir` and
 * adds the sibling dependencies to each tarball's package.json.
 */
export async function packWorkspace(root: string, outDir: string): Promise<PackResult> {
  // One `deno pack -c <root>/deno.json` packs every member that has `exports`,
  // each to `<scope>-<name>-<version>.tgz` in the working directory.
  const output = await run(
    Deno.execPath(),
    ["pack", "--allow-dirty", "-c", `${root}/deno.json`],
    outDir,
  );
  const untyped: string[] = [];
  const diagnostics: string[] = [];
  for (const raw of output.split("\n")) {
    const line = raw.trim();
    const warned = UNTYPED.exec(line);
    if (warned) untyped.push(warned[1]);
    else if (/\berror\b|\bwarn(?:ing)?\b|\bfail(?:ed)?\b|could not/i.test(line)) {
      diagnostics.push(line);
    }
  }

  const tarballs: string[] = [];
  for await (const entry of Deno.readDir(outDir)) {
    if (entry.isFile && entry.name.endsWith(".tgz")) tarballs.push(`${outDir}/${entry.name}`);
  }
  tarballs.sort();

  const unpacked = await Promise.all(tarballs.map(async (tarball) => {
    const dir = tarball.replace(/\.tgz$/, "");
    await Deno.mkdir(dir, { recursive: true });
    await run("tar", ["-xzf", tarball, "-C", dir], outDir);
    const manifest = JSON.parse(await Deno.readTextFile(`${dir}/package/package.json`));
    const imported = new Set<string>();
    for (const file of await emittedFiles(`${dir}/package`)) {
      for (const name of anubisImports(await Deno.readTextFile(file))) imported.add(name);
    }
    imported.delete(manifest.name);
    return { tarball, dir, manifest, imported };
  }));

  const versions = new Map(unpacked.map((p) => [p.manifest.name as string, p.manifest.version]));
  const packages: Packed[] = [];
  for (const { tarball, dir, manifest, imported } of unpacked) {
    const added: Record<string, string> = {};
    for (const name of [...imported].sort()) {
      const version = versions.get(name);
      if (version === undefined) {
        throw new Error(`${manifest.name} imports ${name}, which the workspace does not publish`);
      }
      added[name] = version;
    }
    manifest.dependencies = { ...manifest.dependencies, ...added };
    await Deno.writeTextFile(
      `${dir}/package/package.json`,
      JSON.stringify(manifest, null, 2) + "\n",
    );
    await run("tar", ["-czf", tarball, "-C", dir, "package"], outDir);
    await Deno.remove(dir, { recursive: true });
    packages.push({ name: manifest.name, version: manifest.version, tarball, added });
  }
  return { packages, untyped, diagnostics };
}

if (import.meta.main) {
  const [outDir] = Deno.args;
  if (outDir === undefined) throw new Error("usage: pack.ts <out dir>");
  await Deno.mkdir(outDir, { recursive: true });
  const root = new URL("../../..", import.meta.url).pathname.replace(/\/$/, "");
  const result = await packWorkspace(root, await Deno.realPath(outDir));
  console.log(JSON.stringify(result, null, 2));
}
