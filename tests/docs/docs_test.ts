// Every package's public surface is documented: `deno doc --lint` is clean over
// all entry points together, and every symbol a package's entry points export
// (its `mod.ts` and the other paths its deno.json `exports` names), and every
// public method and property of such a class, carries an `@example` (which
// `deno test --doc` then runs). The rule stops at that surface: files a
// package does not export, and `private`, `protected` or `@internal` members,
// need no example (one that teaches may stay). And no example, public or not,
// in a package's or an example's JSDoc or in any Markdown file (READMEs),
// prints a value (`console.log(x); // expected`) where it should assert it.
import assert from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url);

interface JsDoc {
  tags?: { kind: string }[];
}

interface DocMember {
  name: string;
  isStatic?: boolean;
  accessibility?: "public" | "protected" | "private";
  jsDoc?: JsDoc;
}

interface DocLocation {
  filename: string;
  line: number;
}

interface DocNode {
  name: string;
  declarations?: {
    kind?: string;
    location?: DocLocation;
    jsDoc?: JsDoc;
    def?: { methods?: DocMember[]; properties?: DocMember[]; target?: DocLocation };
  }[];
}

const hasExample = (doc: JsDoc | undefined) => doc?.tags?.some((tag) => tag.kind === "example");

/** A class member outside the public surface: `private`, `protected` or tagged `@internal`. */
const isInternal = (member: DocMember) =>
  (member.accessibility !== undefined && member.accessibility !== "public") ||
  member.jsDoc?.tags?.some((tag) => tag.kind === "internal");

/** The entry points of every published workspace member, as paths from the root. */
async function entryPoints(): Promise<string[]> {
  const root = JSON.parse(await Deno.readTextFile(new URL("deno.json", ROOT)));
  const entries: string[] = [];
  for (const member of root.workspace as string[]) {
    const config = JSON.parse(await Deno.readTextFile(new URL(`${member}/deno.json`, ROOT)));
    if (config.exports === undefined) continue; // tests/ and bench/ publish nothing
    const exports = typeof config.exports === "string"
      ? [config.exports]
      : Object.values(config.exports as Record<string, string>);
    for (const path of exports) entries.push(`${member}/${path}`.replaceAll("/./", "/"));
  }
  return entries;
}

async function deno(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const text = new TextDecoder();
  return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
}

Deno.test("deno doc --lint is clean over every package's entry points", async () => {
  const { code, stdout, stderr } = await deno(["doc", "--lint", ...await entryPoints()]);
  assert.equal(code, 0, `${stdout}\n${stderr}`);
});

async function docNodes(): Promise<Record<string, { symbols?: DocNode[] }>> {
  const { code, stdout, stderr } = await deno(["doc", "--json", ...await entryPoints()]);
  assert.equal(code, 0, stderr);
  return JSON.parse(stdout).nodes;
}

Deno.test("every exported symbol has JSDoc with an @example", async () => {
  const missing: string[] = [];
  let seen = 0;
  const nodes = await docNodes();
  // A symbol two entry points export is declared in one and, in the other, a
  // reference to that declaration: the reference is as documented as it.
  const at = (l: DocLocation) => `${l.filename}:${l.line}`;
  const exemplified = new Set<string>();
  for (const module of Object.values(nodes)) {
    for (const symbol of module.symbols ?? []) {
      for (const d of symbol.declarations ?? []) {
        if (d.location && hasExample(d.jsDoc)) exemplified.add(at(d.location));
      }
    }
  }
  for (const [file, module] of Object.entries(nodes)) {
    for (const symbol of module.symbols ?? []) {
      seen++;
      const documented = symbol.declarations?.some((d) =>
        hasExample(d.jsDoc) ||
        (d.kind === "reference" && d.def?.target !== undefined && exemplified.has(at(d.def.target)))
      );
      if (!documented) missing.push(`${file.replace(ROOT.href, "")}: ${symbol.name}`);
    }
  }
  assert.ok(seen > 100, `only ${seen} symbols found: did the doc JSON format change?`);
  assert.deepEqual(missing, []);
});

Deno.test("every public method and property of an exported class has an @example", async () => {
  const missing: string[] = [];
  let seen = 0;
  for (const [file, module] of Object.entries(await docNodes())) {
    for (const symbol of module.symbols ?? []) {
      const owner = `${file.replace(ROOT.href, "")}: ${symbol.name}`;
      for (const declaration of symbol.declarations ?? []) {
        if (declaration.kind !== "class") continue;
        const members = [...declaration.def?.methods ?? [], ...declaration.def?.properties ?? []];
        for (const member of members) {
          if (isInternal(member)) continue;
          seen++;
          if (!hasExample(member.jsDoc)) {
            missing.push(`${owner}${member.isStatic ? "." : "#"}${member.name}`);
          }
        }
      }
    }
  }
  assert.ok(seen > 50, `only ${seen} class members found: did the doc JSON format change?`);
  assert.deepEqual(missing, []);
});

/** Every `.ts` file under `dir` but tests and test data, as URLs. */
async function sourcesUnder(dir: URL): Promise<URL[]> {
  const files: URL[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (entry.isDirectory && entry.name !== "testdata") {
      files.push(...await sourcesUnder(new URL(`${entry.name}/`, dir)));
    } else if (entry.isFile && entry.name.endsWith(".ts") && !entry.name.endsWith("_test.ts")) {
      files.push(new URL(entry.name, dir));
    }
  }
  return files;
}

/** The source files of every published workspace member, as URLs (tests and test data aside). */
async function packageSources(): Promise<URL[]> {
  const root = JSON.parse(await Deno.readTextFile(new URL("deno.json", ROOT)));
  const files: URL[] = [];
  for (const member of root.workspace as string[]) {
    const dir = new URL(`${member.replace(/^\.\//, "")}/`, ROOT);
    const config = JSON.parse(await Deno.readTextFile(new URL("deno.json", dir)));
    if (config.exports !== undefined) files.push(...await sourcesUnder(dir));
  }
  return files;
}

/** Every Markdown file of the repository (dependencies and generated data aside), as URLs. */
async function markdownFiles(dir: URL = ROOT): Promise<URL[]> {
  const skipped = new Set([".git", "node_modules", ".data", "results"]);
  const files: URL[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (entry.isDirectory && !skipped.has(entry.name)) {
      files.push(...await markdownFiles(new URL(`${entry.name}/`, dir)));
    } else if (entry.isFile && entry.name.endsWith(".md")) {
      files.push(new URL(entry.name, dir));
    }
  }
  return files;
}

/**
 * The lines of `file`'s code examples that print (`console.log(x); //
 * expected`, which `deno test --doc` never compares): in JSDoc blocks of a
 * `.ts` file, in fenced TypeScript or JavaScript blocks of a Markdown file.
 */
async function printingLines(file: URL): Promise<{ examples: number; printing: string[] }> {
  const markdown = file.pathname.endsWith(".md");
  const printing: string[] = [];
  let examples = 0;
  let inFence = false;
  let inCode = false;
  const lines = (await Deno.readTextFile(file)).split("\n");
  for (const [index, line] of lines.entries()) {
    const text = markdown ? line : /^\s*\*\s?(.*)$/.exec(line)?.[1];
    if (text === undefined) continue;
    const fence = /^\s*```\s*(\w*)/.exec(text);
    if (fence) {
      inFence = !inFence;
      // A Markdown block is scanned only when it is TypeScript or JavaScript.
      inCode = inFence && (!markdown || /^(ts|typescript|js|javascript|tsx|jsx)$/.test(fence[1]));
      if (inCode) examples++;
      continue;
    }
    const code = text.split(" // ")[0];
    if (inCode && /\bconsole\.log\(/.test(code)) {
      printing.push(`${file.href.replace(ROOT.href, "")}:${index + 1}: ${text.trim()}`);
    }
  }
  return { examples, printing };
}

Deno.test("doc examples assert what they show instead of printing it", async () => {
  const printing: string[] = [];
  let examples = 0;
  const examplesDir = new URL("examples/", ROOT);
  const files = [
    ...await packageSources(),
    ...await sourcesUnder(examplesDir),
    ...await markdownFiles(),
  ];
  for (const file of files) {
    const found = await printingLines(file);
    examples += found.examples;
    printing.push(...found.printing);
  }
  assert.ok(examples > 450, `only ${examples} examples found: did the comment format change?`);
  assert.deepEqual(printing, []);
});
