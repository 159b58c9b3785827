/**
 * Interop over stdio with the official TypeScript SDK v1 client
 * (`@modelcontextprotocol/sdk@1.32.2`): a real child process started by its
 * `StdioClientTransport`.
 */

import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const ROOT = new URL("..", import.meta.url).pathname;

async function connect() {
  const client = new Client({ name: "sdk-v1", version: "1.0.0" }, {
    capabilities: { elicitation: {} },
  });
  client.setRequestHandler(ElicitRequestSchema, (request: { params: { message: string } }) => {
    assert.equal(request.params.message, "What is your name?");
    return { action: "accept", content: { name: "Bob" } };
  });
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: ["run", "-A", "cli/main.ts", "serve", "examples/hello.ts"],
    cwd: ROOT,
    stderr: "pipe",
  });
  await client.connect(transport);
  return client;
}

Deno.test("sdk v1 over stdio: handshake, lists, calls, progress and elicitation", async () => {
  const client = await connect();
  try {
    assert.deepEqual(client.getServerVersion(), { name: "hello", version: "1.0.0" });
    assert.equal(client.getInstructions(), "Say hello.");
    const tools = await client.listTools();
    assert.deepEqual(tools.tools.map((t: { name: string }) => t.name), [
      "echo",
      "ask_name",
      "count",
    ]);
    assert.deepEqual(await client.callTool({ name: "echo", arguments: { text: "x" } }), {
      content: [{ type: "text", text: "echo: x" }],
    });
    const progress: number[] = [];
    const counted = await client.callTool({ name: "count", arguments: {} }, undefined, {
      onprogress: (p: { progress: number }) => progress.push(p.progress),
    });
    assert.deepEqual(counted.content, [{ type: "text", text: "counted" }]);
    assert.deepEqual(progress, [1, 2, 3]);
    const asked = await client.callTool({ name: "ask_name", arguments: {} });
    assert.deepEqual(asked.content, [{ type: "text", text: "Hello, Bob!" }]);
    const read = await client.readResource({ uri: "test://items/42" });
    assert.deepEqual(read.contents, [{ uri: "test://items/42", text: "item 42" }]);
    const templates = await client.listResourceTemplates();
    assert.deepEqual(
      templates.resourceTemplates.map((t: { uriTemplate: string }) => t.uriTemplate),
      ["test://items/{id}"],
    );
    const prompt = await client.getPrompt({ name: "greet", arguments: { who: "Ada" } });
    assert.deepEqual(prompt.messages, [{
      role: "user",
      content: { type: "text", text: "Greet Ada" },
    }]);
    await client.ping();
  } finally {
    await client.close();
  }
});
