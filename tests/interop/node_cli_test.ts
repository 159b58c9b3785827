// Started by Node, the CLI says it needs Deno and exits 1 (it used to exit 0
// silently); imported by a Node program, it stays quiet. Node 20 runs the CLI
// bundled with `deno bundle --platform node`.
import assert from "node:assert/strict";

const ROOT = new URL("../..", import.meta.url);

async function node(args: string[], cwd: string) {
  const out = await new Deno.Command("node", { args, cwd, stdout: "piped", stderr: "piped" })
    .output();
  const text = new TextDecoder();
  return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
}

Deno.test("cli under Node: one line naming the Deno command, exit code 1; imported, nothing", async () => {
  const dir = await Deno.makeTempDir({ prefix: "anubis_node_cli_" });
  try {
    const bundled = await new Deno.Command(Deno.execPath(), {
      args: ["bundle", "--quiet", "--platform", "node", "-o", `${dir}/main.mjs`, "cli/main.ts"],
      cwd: ROOT,
    }).output();
    assert.equal(bundled.code, 0, new TextDecoder().decode(bundled.stderr));

    const started = await node([`${dir}/main.mjs`, "serve", "examples/hello.ts"], dir);
    assert.equal(started.code, 1);
    assert.equal(started.stdout, "");
    assert.match(
      started.stderr,
      /^anubis: the CLI runs on Deno; .*`npx deno@2\.9\.6 run -A jsr:@anubis\/cli serve <module>`/,
    );
    assert.equal(started.stderr.trim().split("\n").length, 1);

    await Deno.writeTextFile(
      `${dir}/importer.mjs`,
      'const cli = await import("./main.mjs");\nconsole.log(typeof cli.main);\n',
    );
    const imported = await node([`${dir}/importer.mjs`], dir);
    assert.deepEqual(imported, { code: 0, stdout: "function\n", stderr: "" });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
