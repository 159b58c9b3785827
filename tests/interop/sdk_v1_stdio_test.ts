/**
 * Interop over stdio with the official TypeScript SDK v1 client
 * (`@modelcontextprotocol/sdk@1.32.2`): a real child process started by its
 * `StdioClientTransport`.
 */

import assert from "node:assert/strict";
import { serveParams } from "../helpers/stdio_child.ts";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

/** Connects the v1 client, making its `initialize` propose `version`. */
async function connect(version: string) {
  const client = new Client({ name: "sdk-v1", version: "1.0.0" }, {
    capabilities: { elicitation: {} },
  });
  client.setRequestHandler(ElicitRequestSchema, (request: { params: { message: string } }) => {
    assert.equal(request.params.message, "What is your name?");
    return { action: "accept", content: { name: "Bob" } };
  });
  const transport = new StdioClientTransport(serveParams("examples/hello.ts"));
  const send = transport.send.bind(transport);
  transport.send = (
    message: { method?: string; params?: Record<string, unknown> },
    options?: unknown,
  ) => {
    if (message.method === "initialize") {
      message = { ...message, params: { ...message.params, protocolVersion: version } };
    }
    return send(message as never, options as never);
  };
  await client.connect(transport);
  return client;
}

for (const version of ["2025-03-26", "2025-06-18", "2025-11-25"]) {
  Deno.test(`sdk v1 over stdio at ${version}: handshake, lists, calls, progress, elicitation`, async () => {
    const client = await connect(version);
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
      if (version === "2025-03-26") {
        // Elicitation is not part of 2025-03-26: the frame refuses with -32600.
        await assert.rejects(
          client.callTool({ name: "ask_name", arguments: {} }),
          /-32600.*elicitation\/create is not part of protocol 2025-03-26/,
        );
      } else {
        const asked = await client.callTool({ name: "ask_name", arguments: {} });
        assert.deepEqual(asked.content, [{ type: "text", text: "Hello, Bob!" }]);
      }
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
}
