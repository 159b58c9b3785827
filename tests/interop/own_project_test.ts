/**
 * A user's own project, outside this repository: `cli init` writes it, its
 * imports are pointed at this checkout's packages (JSR is what they name, and
 * it is out of reach here), and then its own tasks run as written: `deno task
 * test` passes, `deno task serve` answers the official v1 client over stdio
 * and `deno task serve:http` over Streamable HTTP.
 */

import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type CommandResult, runCommand } from "../helpers/command.ts";

const REPO = new URL("../../", import.meta.url).pathname;
const PACKAGES = [
  ["core", "mod.ts"],
  ["dialects", "mod.ts"],
  ["transport-stdio", "mod.ts"],
  ["transport-http", "mod.ts"],
  ["event-store-memory", "mod.ts"],
  ["event-store-kv", "mod.ts"],
  ["session-kv", "mod.ts"],
  ["testing", "mod.ts"],
  ["telemetry", "mod.ts"],
  ["cli", "main.ts"],
];

/** Runs `deno args` in `cwd` (bounded at 120 s) and returns its exit code and output. */
function deno(cwd: string, ...args: string[]): Promise<CommandResult> {
  return runCommand(Deno.execPath(), args, { cwd, signal: AbortSignal.timeout(120_000) });
}

/** Lists the tools and greets Ada through a connected client. */
async function greet(client: Client) {
  const listed = await client.listTools();
  assert.deepEqual(listed.tools.map((tool: { name: string }) => tool.name), ["greet"]);
  const called = await client.callTool({ name: "greet", arguments: { name: "Ada" } });
  assert.deepEqual(called.content, [{ type: "text", text: "Hello, Ada!" }]);
  const read = await client.readResource({ uri: "info://about" });
  assert.equal((read.contents[0] as { text: string }).text, "A server made with anubis init.");
}

Deno.test("own project: cli init writes a project that tests and serves outside the repository", async (t) => {
  const home = await Deno.makeTempDir({ prefix: "anubis-own-" });
  const dir = `${home}/my-server`;
  try {
    await t.step("init writes deno.json, server.ts and server_test.ts, asking JSR", async () => {
      const init = await deno(home, "run", "-A", `${REPO}cli/main.ts`, "init", "my-server");
      assert.equal(init.code, 0, init.stderr);
      assert.match(init.stderr, /wrote my-server\/server\.ts/);
      const config = JSON.parse(await Deno.readTextFile(`${dir}/deno.json`));
      // The README shows this deno.json as written.
      const readme = await Deno.readTextFile(`${REPO}README.md`);
      const section = readme.slice(readme.indexOf("## Your own server"));
      const shown = section.match(/```json\n([\s\S]*?)```/)![1];
      assert.deepEqual(JSON.parse(shown), config);
      assert.deepEqual(config.imports, {
        "@anubis/cli": "jsr:@anubis/cli@^0.1.0",
        "@anubis/core": "jsr:@anubis/core@^0.1.0",
        "@anubis/testing": "jsr:@anubis/testing@^0.1.0",
      });
      // The test calls the server in process with the test client, no registry passed;
      // the handler is unannotated.
      const test = await Deno.readTextFile(`${dir}/server_test.ts`);
      assert.match(test, /await connect\(server\);/);
      assert.match(test, /import \{ connect \} from "@anubis\/testing";/);
      assert.match(await Deno.readTextFile(`${dir}/server.ts`), /handler: \(\{ name \}\) =>/);
      // Point the imports at this checkout, as JSR would serve its packages.
      config.imports = {
        ...Object.fromEntries(
          PACKAGES.map(([name, entry]) => [`@anubis/${name}`, `${REPO}${name}/${entry}`]),
        ),
        ajv: "npm:ajv@8.17.1",
      };
      await Deno.writeTextFile(`${dir}/deno.json`, JSON.stringify(config, null, 2));
    });

    await t.step("a second init writes nothing and says what exists", async () => {
      const before = await Deno.readTextFile(`${dir}/deno.json`);
      const again = await deno(home, "run", "-A", `${REPO}cli/main.ts`, "init", "my-server");
      assert.equal(again.code, 1);
      assert.match(
        again.stderr,
        /^anubis: exists already: .*deno\.json.*\(nothing was written\)\n$/,
      );
      assert.equal(await Deno.readTextFile(`${dir}/deno.json`), before);
    });

    await t.step("deno task test passes", async () => {
      const test = await deno(dir, "task", "test");
      assert.equal(test.code, 0, test.stdout + test.stderr);
      assert.match(test.stdout, /ok \| 2 passed \| 0 failed/);
    });

    await t.step("deno task serve answers the official v1 client over stdio", async () => {
      const client = new Client({ name: "own", version: "1.0.0" });
      // The SDK hands a child only HOME, PATH and a few more; DENO_DIR must reach it too.
      const transport = new StdioClientTransport({
        command: Deno.execPath(),
        args: ["task", "-q", "serve"],
        cwd: dir,
        env: Deno.env.toObject(),
        stderr: "pipe",
      });
      let stderr = "";
      transport.stderr?.on(
        "data",
        (chunk: Uint8Array) => stderr += new TextDecoder().decode(chunk),
      );
      try {
        await client.connect(transport);
        await greet(client);
      } catch (error) {
        throw new Error(`deno task serve: ${error}; its stderr: ${stderr}`);
      } finally {
        await client.close();
      }
    });

    await t.step("deno task serve:http answers the official v1 client over HTTP", async () => {
      const child = new Deno.Command(Deno.execPath(), {
        args: ["task", "-q", "serve:http", "--port", "0"],
        cwd: dir,
        stdin: "null",
        stdout: "null",
        stderr: "piped",
      }).spawn();
      const lines = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
      const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
      try {
        let seen = "";
        while (!/listening on (\S+)/.test(seen)) {
          const { value, done } = await lines.read();
          assert.ok(!done, `serve:http ended before listening: ${seen}`);
          seen += value;
        }
        const url = new URL(seen.match(/listening on (\S+)/)![1]);
        const client = new Client({ name: "own", version: "1.0.0" });
        await client.connect(new StreamableHTTPClientTransport(url));
        try {
          await greet(client);
        } finally {
          await client.close();
        }
      } finally {
        clearTimeout(timer);
        child.kill("SIGTERM");
        await lines.cancel();
        await child.status;
      }
    });
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
