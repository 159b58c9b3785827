// Every published workspace member packs with complete public types, and its
// documentation stands on its own entry points plus those of the workspace
// packages it depends on.
//
// `deno pack` (Deno 2.9.6) warns "Could not generate types for '<module>'"
// for every module that no public type references, however fully typed it
// is (denoland/deno#36829): fast check only reaches modules the public
// declarations need. Such a module has no `.d.ts`, and none is needed, since
// nothing a consumer can import points at it. So the pack check proves that:
// every export has its `.d.ts`, every package-local edge of the declarations
// reachable from the exports lands on a shipped `.d.ts`, and each warned
// module lies outside that closure. Any other pack diagnostic fails.
//
// Run on one package's entry points alone, `deno doc --lint` calls a type
// private when another workspace package owns it (`McpServer` of
// @anubis/core in @anubis/transport-stdio); once published, that is a public
// type of a dependency. So the doc check lints a package with its workspace
// dependencies' entry points, and on its own entry points accepts only
// `private-type-ref`s to types a dependency exports and the package does not
// declare itself.
import assert from "node:assert/strict";
import { runCommand } from "../helpers/command.ts";

const ROOT = new URL("../../", import.meta.url);

interface Member {
  /** The folder, as written in the root deno.json (`./core`). */
  dir: string;
  /** The JSR name (`@anubis/core`). */
  name: string;
  /** The entry points, as paths from the root (`./core/mod.ts`). */
  entries: string[];
}

async function readJson(path: string): Promise<Record<string, unknown>> {
  return JSON.parse(await Deno.readTextFile(new URL(path, ROOT)));
}

/** The workspace members that publish something (have `exports`). */
async function publishedMembers(): Promise<Member[]> {
  const members: Member[] = [];
  for (const dir of (await readJson("deno.json")).workspace as string[]) {
    const config = await readJson(`${dir}/deno.json`);
    if (config.exports === undefined) continue; // tests/ and bench/ publish nothing
    const exports = typeof config.exports === "string"
      ? [config.exports]
      : Object.values(config.exports as Record<string, string>);
    const entries = exports.map((path) => `${dir}/${path}`.replace("/./", "/"));
    members.push({ dir, name: config.name as string, entries });
  }
  return members;
}

/** The member's own source files (no tests, no test data), as paths from the root. */
async function sourceFiles(dir: string): Promise<string[]> {
  const files: string[] = [];
  const walk = async (folder: string) => {
    for await (const entry of Deno.readDir(new URL(folder, ROOT))) {
      const path = `${folder}/${entry.name}`;
      if (entry.isDirectory && entry.name !== "testdata") await walk(path);
      if (entry.isFile && entry.name.endsWith(".ts") && !entry.name.endsWith("_test.ts")) {
        files.push(path);
      }
    }
  };
  await walk(dir);
  return files;
}

/** The workspace members `member` imports in its source, and theirs, transitively. */
async function workspaceDependencies(member: Member, all: Member[]): Promise<Member[]> {
  const byName = new Map(all.map((m) => [m.name, m]));
  const found = new Set<Member>();
  const visit = async (current: Member) => {
    for (const file of await sourceFiles(current.dir)) {
      const text = await Deno.readTextFile(new URL(file, ROOT));
      // Import and export statements start a line; JSDoc examples start with ` * `.
      for (const [, name] of text.matchAll(/^(?:import|export|\}).*?"(@anubis\/[\w-]+)/gm)) {
        const dependency = byName.get(name);
        if (dependency === undefined || dependency === member || found.has(dependency)) continue;
        found.add(dependency);
        await visit(dependency);
      }
    }
  };
  await visit(member);
  return [...found];
}

async function run(
  command: string,
  args: string[],
  cwd: URL,
): Promise<{ code: number; stdout: string; output: string }> {
  const out = await runCommand(command, args, { cwd });
  return { code: out.code, stdout: out.stdout, output: out.stdout + out.stderr };
}

const UNREFERENCED = /^Could not generate types for '([^']+)'\. Types will not be included/;

/** The `.d.ts` files of an unpacked package reachable from `starts` by relative edges. */
async function declarationClosure(
  packageDir: string,
  starts: string[],
): Promise<{ reached: Set<string>; broken: string[] }> {
  const reached = new Set<string>();
  const broken: string[] = [];
  const edges =
    /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s*|<reference\s+path\s*=\s*)["'](\.{1,2}\/[^"']+)["']/gm;
  const queue = [...starts];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (reached.has(file)) continue;
    reached.add(file);
    const text = await Deno.readTextFile(`${packageDir}/${file}`);
    for (const [, specifier] of text.matchAll(edges)) {
      const path = new URL(specifier, `file:///package/${file}`).pathname;
      const target = path.slice("/package/".length)
        .replace(/\.m?js$/, (ext) => ext === ".mjs" ? ".d.mts" : ".d.ts");
      const shipped = path.startsWith("/package/") &&
        await Deno.stat(`${packageDir}/${target}`).then(() => true, () => false);
      if (shipped) queue.push(target);
      else broken.push(`${file} -> ${specifier}`);
    }
  }
  return { reached, broken };
}

const members = await publishedMembers();

for (const member of members) {
  Deno.test(`deno pack ${member.name}: every public module has its types`, async () => {
    const temp = await Deno.makeTempDir({ prefix: "pack_types_" });
    try {
      const packed = await run(
        Deno.execPath(),
        ["pack", "--allow-dirty", "--output", `${temp}/package.tgz`],
        new URL(`${member.dir}/`, ROOT),
      );
      assert.equal(packed.code, 0, packed.output);
      const unreferenced: string[] = [];
      const unexpected: string[] = [];
      for (const raw of packed.output.split("\n")) {
        const line = raw.trim();
        const warned = UNREFERENCED.exec(line);
        if (warned) unreferenced.push(warned[1]);
        else if (/\berror\b|\bwarn(?:ing)?\b|\bfail(?:ed)?\b|slow type|could not/i.test(line)) {
          unexpected.push(line);
        }
      }
      assert.deepEqual(unexpected, []);

      const untar = await run("tar", ["-xzf", `${temp}/package.tgz`, "-C", temp], ROOT);
      assert.equal(untar.code, 0, untar.output);
      const dir = `${temp}/package`;
      const manifest = JSON.parse(await Deno.readTextFile(`${dir}/package.json`));
      const typeTargets = Object.values(manifest.exports as Record<string, { types?: string }>)
        .map((target) => target.types);
      assert.equal(typeTargets.length, member.entries.length, "one export per entry point");
      assert.ok(typeTargets.every((t) => t !== undefined), JSON.stringify(manifest.exports));
      const { reached, broken } = await declarationClosure(
        dir,
        typeTargets.map((target) => target!.replace(/^\.\//, "")),
      );
      assert.deepEqual(broken, [], "declaration edges with no shipped .d.ts");

      const base = new URL(`${member.dir}/`, ROOT).href;
      const inClosure = unreferenced.filter((url) => {
        assert.ok(url.startsWith(base), `${url} lies outside ${member.dir}`);
        return reached.has(url.slice(base.length).replace(/\.ts$/, ".d.ts"));
      });
      assert.deepEqual(inClosure, [], "modules the public declarations need but lack types");
    } finally {
      await Deno.remove(temp, { recursive: true });
    }
  });

  Deno.test(`deno doc --lint ${member.name}: clean on its entry points`, async () => {
    const dependencies = await workspaceDependencies(member, members);
    const dependencyEntries = dependencies.flatMap((d) => d.entries);

    const together = await run(
      Deno.execPath(),
      ["doc", "--lint", ...member.entries, ...dependencyEntries],
      ROOT,
    );
    assert.equal(together.code, 0, together.output);

    const alone = await run(Deno.execPath(), ["doc", "--lint", ...member.entries], ROOT);
    const diagnostics = alone.output.split("\n").filter((line) => /^error\[/.test(line));
    const referenced = new Set<string>();
    const other: string[] = [];
    for (const line of diagnostics) {
      const match = /^error\[private-type-ref\]: .* references private type '([^']+)'$/.exec(line);
      if (match) referenced.add(match[1]);
      else other.push(line);
    }
    assert.deepEqual(other, []);
    assert.equal(alone.code === 0, referenced.size === 0, alone.output);
    if (referenced.size === 0) return;

    const docs = await run(Deno.execPath(), ["doc", "--json", ...dependencyEntries], ROOT);
    assert.equal(docs.code, 0, docs.output);
    const nodes = JSON.parse(docs.stdout).nodes as Record<string, { symbols?: { name: string }[] }>;
    const dependencyPublic = new Set(
      Object.values(nodes).flatMap((module) => (module.symbols ?? []).map((s) => s.name)),
    );
    const own = new Set<string>();
    for (const file of await sourceFiles(member.dir)) {
      const text = await Deno.readTextFile(new URL(file, ROOT));
      const declarations = text.matchAll(
        /^export\s+(?:declare\s+)?(?:abstract\s+)?(?:interface|type|class|enum|function|const|let)\s+(\w+)/gm,
      );
      for (const [, name] of declarations) own.add(name);
    }
    const ownPrivate = [...referenced].filter((name) =>
      own.has(name) || !dependencyPublic.has(name)
    );
    assert.deepEqual(ownPrivate, [], "types this package owns (or no dependency exports)");
  });
}

Deno.test("the declaration closure follows every relative edge and reports missing and escaping ones", async () => {
  const dir = await Deno.makeTempDir({ prefix: "pack_closure_" });
  try {
    const files: Record<string, string> = {
      "mod.d.ts": 'export * from "./a.js";\nexport type { B } from "./sub/b.js";\n',
      "a.d.ts":
        'import type { C } from "./pkg/c.js";\nexport type A = C | typeof import("./d.js");\n',
      "sub/b.d.ts": 'import "npm:ajv";\nexport type B = import("../a.js").A;\n',
      "pkg/c.d.ts": 'export type C = import("../../outside.js").O;\n',
      "private.d.ts": "export type P = number;\n",
    };
    await Deno.mkdir(`${dir}/sub`);
    await Deno.mkdir(`${dir}/pkg`);
    for (const [path, text] of Object.entries(files)) {
      await Deno.writeTextFile(`${dir}/${path}`, text);
    }
    const { reached, broken } = await declarationClosure(dir, ["mod.d.ts"]);
    assert.deepEqual([...reached].sort(), ["a.d.ts", "mod.d.ts", "pkg/c.d.ts", "sub/b.d.ts"]);
    assert.deepEqual(broken.sort(), ["a.d.ts -> ./d.js", "pkg/c.d.ts -> ../../outside.js"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
