/**
 * Interop with the MCP Inspector's command line
 * (`@modelcontextprotocol/inspector-cli@1.0.3`), which starts
 * `cli serve examples/everything.ts` itself (stdio) or talks to it over
 * Streamable HTTP, one method per run, and prints the result as JSON.
 */

import assert from "node:assert/strict";
import { startHttpServer } from "../helpers/everything_http_server.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const INSPECTOR = "npm:@modelcontextprotocol/inspector-cli@1.0.3/build/index.js";
const SERVE = [Deno.execPath(), "run", "-A", `${ROOT}cli/main.ts`, "serve"];

/**
 * A working directory for the Inspector. It looks for its own package.json
 * at `../package.json` relative to the working directory (and imports it
 * relative to itself), so the directory's parent needs one.
 */
async function inspectorCwd(): Promise<{ cwd: string; remove(): Promise<void> }> {
  const base = await Deno.makeTempDir({ prefix: "anubis-inspector-" });
  await Deno.writeTextFile(`${base}/package.json`, "{}");
  await Deno.mkdir(`${base}/cwd`);
  return { cwd: `${base}/cwd`, remove: () => Deno.remove(base, { recursive: true }) };
}

/** Runs the Inspector CLI once and parses what it printed. */
async function inspect(cwd: string, target: string[], args: string[]): Promise<unknown> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--config", `${ROOT}deno.json`, INSPECTOR, ...target, ...args],
    cwd,
    stdin: "null",
    // A hung Inspector is killed, and the test fails instead of hanging.
    signal: AbortSignal.timeout(60_000),
  }).output();
  const stdout = new TextDecoder().decode(output.stdout);
  assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
  return JSON.parse(stdout);
}

Deno.test("MCP Inspector CLI drives the everything server over stdio", async (t) => {
  const dir = await inspectorCwd();
  const everything = [...SERVE, `${ROOT}examples/everything.ts`];
  try {
    await t.step("tools/list", async () => {
      const listed = await inspect(dir.cwd, everything, ["--method", "tools/list"]) as {
        tools: { name: string }[];
      };
      assert.ok(listed.tools.some((tool) => tool.name === "test_simple_text"));
      assert.ok(listed.tools.some((tool) => tool.name === "json_schema_2020_12_tool"));
    });

    await t.step("tools/call with arguments", async () => {
      const called = await inspect(dir.cwd, everything, [
        "--method",
        "tools/call",
        "--tool-name",
        "json_schema_2020_12_tool",
        "--tool-arg",
        "name=Ada",
        "contactMethod=email",
        "email=ada@example.com",
      ]);
      assert.deepEqual(called, {
        content: [{
          type: "text",
          text:
            'JSON Schema 2020-12 tool called with: {"name":"Ada","contactMethod":"email","email":"ada@example.com"}',
        }],
      });
    });

    await t.step("resources/read of a template", async () => {
      const read = await inspect(dir.cwd, everything, [
        "--method",
        "resources/read",
        "--uri",
        "test://template/123/data",
      ]);
      assert.deepEqual(read, {
        contents: [{
          uri: "test://template/123/data",
          mimeType: "application/json",
          text: '{"id":"123","templateTest":true,"data":"Data for ID: 123"}',
        }],
      });
    });

    await t.step("prompts/get with arguments", async () => {
      const prompt = await inspect(dir.cwd, everything, [
        "--method",
        "prompts/get",
        "--prompt-name",
        "test_prompt_with_arguments",
        "--prompt-args",
        "arg1=a",
        "arg2=b",
      ]) as { messages: unknown[] };
      assert.deepEqual(prompt.messages, [{
        role: "user",
        content: { type: "text", text: "Prompt with arguments: arg1='a', arg2='b'" },
      }]);
    });

    await t.step("logging/setLevel", async () => {
      assert.deepEqual(
        await inspect(dir.cwd, everything, [
          "--method",
          "logging/setLevel",
          "--log-level",
          "debug",
        ]),
        {},
      );
    });
  } finally {
    await dir.remove();
  }
});

Deno.test("MCP Inspector CLI drives the everything server over Streamable HTTP", async () => {
  const dir = await inspectorCwd();
  const server = await startHttpServer();
  try {
    const target = [server.url.href, "--transport", "http"];
    const called = await inspect(dir.cwd, target, [
      "--method",
      "tools/call",
      "--tool-name",
      "test_multiple_content_types",
    ]) as { content: { type: string }[] };
    assert.deepEqual(called.content.map((c) => c.type), ["text", "image", "resource"]);
    const templates = await inspect(dir.cwd, target, ["--method", "resources/templates/list"]);
    assert.deepEqual(
      (templates as { resourceTemplates: { uriTemplate: string }[] }).resourceTemplates
        .map((t) => t.uriTemplate),
      ["test://template/{id}/data"],
    );
  } finally {
    await server.stop();
    await dir.remove();
  }
});
