/**
 * The notes example served by `cli serve examples/notes.ts` on stdio and
 * driven by the official SDK v1 client: the local user is the owner, tool
 * output is validated by the client against the declared output schema, and
 * index subscribers hear of every change.
 */

import assert from "node:assert/strict";
import { serveParams } from "../helpers/stdio_child.ts";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { until } from "../helpers/everything_answers.ts";

Deno.test("notes over stdio with the SDK v1 client", async () => {
  const client = new Client({ name: "sdk-v1", version: "1.0.0" });
  const updated: string[] = [];
  client.setNotificationHandler(
    ResourceUpdatedNotificationSchema,
    (n: { params: { uri: string } }) => void updated.push(n.params.uri),
  );
  await client.connect(
    new StdioClientTransport(serveParams("examples/notes.ts")),
  );
  try {
    assert.match(client.getInstructions()!, /^Notes you own/);
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t: { name: string }) => t.name), [
      "add_note",
      "search_notes",
      "recent_notes",
      "delete_note",
    ]);
    // recent_notes' zod schema, listed as JSON Schema with its defaults.
    const recent = tools.find((t: { name: string }) => t.name === "recent_notes")!;
    assert.deepEqual(recent.inputSchema.properties?.order, {
      type: "string",
      enum: ["newest", "oldest"],
      default: "newest",
    });
    await client.subscribeResource({ uri: "notes://index" });
    const added = await client.callTool({
      name: "add_note",
      arguments: { title: "Plan", body: "Ship the notes example" },
    });
    assert.deepEqual(added.structuredContent, { id: "1", uri: "notes://1" });
    await until(() => updated.length === 1);
    assert.deepEqual(updated, ["notes://index"]);
    const read = await client.readResource({ uri: "notes://1" });
    assert.deepEqual(read.contents, [{
      uri: "notes://1",
      mimeType: "text/markdown",
      text: "# Plan\n\nShip the notes example",
    }]);
    const completed = await client.complete({
      ref: { type: "ref/resource", uri: "notes://{id}" },
      argument: { name: "id", value: "" },
    });
    assert.deepEqual(completed.completion.values, ["1"]);
    const listed = await client.callTool({ name: "recent_notes", arguments: {} });
    assert.deepEqual(listed.content, [{ type: "text", text: "notes://1 Plan" }]);
    const prompt = await client.getPrompt({ name: "summarize_notes" });
    assert.equal(prompt.messages.length, 2);
    const deleted = await client.callTool({ name: "delete_note", arguments: { id: "1" } });
    assert.deepEqual(deleted.content, [{ type: "text", text: "Deleted note 1" }]);
    await until(() => updated.length === 2);
    await assert.rejects(client.readResource({ uri: "notes://1" }), /No note with id 1/);
  } finally {
    await client.close();
  }
});
