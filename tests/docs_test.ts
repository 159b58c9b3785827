// Every package's public surface is documented: `deno doc --lint` is clean over
// all entry points together, and every exported symbol carries an `@example`
// (which `deno test --doc` then runs).
import assert from "node:assert/strict";

const ROOT = new URL("../", import.meta.url);

interface DocNode {
  name: string;
  declarations?: { jsDoc?: { tags?: { kind: string }[] } }[];
}

/** The entry points of every workspace member, as paths from the root. */
async function entryPoints(): Promise<string[]> {
  const root = JSON.parse(await Deno.readTextFile(new URL("deno.json", ROOT)));
  const entries: string[] = [];
  for (const member of root.workspace as string[]) {
    const config = JSON.parse(await Deno.readTextFile(new URL(`${member}/deno.json`, ROOT)));
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

Deno.test("every exported symbol has JSDoc with an @example", async () => {
  const { code, stdout, stderr } = await deno(["doc", "--json", ...await entryPoints()]);
  assert.equal(code, 0, stderr);
  const nodes = JSON.parse(stdout).nodes as Record<string, { symbols?: DocNode[] }>;
  const missing: string[] = [];
  let seen = 0;
  for (const [file, module] of Object.entries(nodes)) {
    for (const symbol of module.symbols ?? []) {
      seen++;
      const documented = symbol.declarations?.some((d) =>
        d.jsDoc?.tags?.some((tag) => tag.kind === "example")
      );
      if (!documented) missing.push(`${file.replace(ROOT.href, "")}: ${symbol.name}`);
    }
  }
  assert.ok(seen > 100, `only ${seen} symbols found: did the doc JSON format change?`);
  assert.deepEqual(missing, []);
});
