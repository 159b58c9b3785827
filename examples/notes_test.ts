/**
 * The notes example in process with the test client of
 * `@anubis/testing` and the real dialects: roles from `init` and request
 * assigns, `serverTools`, frame-dependent instructions, cache hints, the zod
 * tool's defaults, the template, the index resource and the prompt.
 */

import assert from "node:assert/strict";
import { connect } from "@anubis/testing";
import notes from "./notes.ts";

const names = (tools: Record<string, unknown>[]) => tools.map((tool) => tool.name);

Deno.test("notes: roles, hidden tools, instructions, caching, resources and prompts", async (t) => {
  // Stateless (2026-07-28) clients; an HTTP middleware would attach the owner's role.
  const reader = await connect(notes, { transport: "http" });
  const owner = await connect(notes, { transport: "http", assigns: { role: "owner" } });
  try {
    await t.step("readers do not see delete_note; owners do", async () => {
      const listed = await reader.listTools();
      assert.deepEqual(names(listed.tools), ["add_note", "search_notes", "recent_notes"]);
      assert.deepEqual([listed.ttlMs, listed.cacheScope], [300_000, "private"]);
      await assert.rejects(reader.callTool("delete_note", { id: "1" }), {
        message: "Unknown tool: delete_note",
      });
      assert.deepEqual(names((await owner.listTools()).tools), [
        "add_note",
        "search_notes",
        "recent_notes",
        "delete_note",
      ]);
    });

    await t.step("instructions depend on the role", async () => {
      assert.match((await reader.request("server/discover")).instructions as string, /^Shared/);
      assert.match((await owner.request("server/discover")).instructions as string, /^Notes you/);
    });

    await t.step("add, search, list, read, complete and summarize", async () => {
      const added = await reader.callTool("add_note", {
        title: "Groceries",
        body: "Milk and bread",
      });
      assert.deepEqual(added.content, [{
        type: "resource_link",
        uri: "notes://1",
        name: "Groceries",
      }]);
      assert.deepEqual(added.structuredContent, { id: "1", uri: "notes://1" });
      await reader.callTool("add_note", { title: "Trip", body: "Buy bread for the road" });
      const found = await reader.callTool("search_notes", { query: "bread" });
      assert.deepEqual(found.content, [{
        type: "text",
        text: "notes://1 Groceries\nnotes://2 Trip",
      }]);
      const read = await reader.readResource("notes://2");
      assert.deepEqual(read.contents, [{
        uri: "notes://2",
        mimeType: "text/markdown",
        text: "# Trip\n\nBuy bread for the road",
      }]);
      assert.deepEqual([read.ttlMs, read.cacheScope], [5_000, "private"]);
      const index = await reader.readResource("notes://index");
      assert.equal(index.contents[0].text, "- [Groceries](notes://1)\n- [Trip](notes://2)");
      const completed = await reader.complete(
        { type: "ref/resource", uri: "notes://{id}" },
        { name: "id", value: "2" },
      );
      assert.deepEqual(completed.completion.values, ["2"]);
      const prompt = await reader.getPrompt("summarize_notes", { topic: "milk" });
      assert.deepEqual(prompt.messages, [
        {
          role: "user",
          content: {
            type: "resource",
            resource: {
              uri: "notes://1",
              mimeType: "text/markdown",
              text: "# Groceries\n\nMilk and bread",
            },
          },
        },
        {
          role: "user",
          content: { type: "text", text: "Summarize what these notes say about milk." },
        },
      ]);
      const prompts = await reader.listPrompts();
      assert.deepEqual([prompts.ttlMs, prompts.cacheScope], [3_600_000, "public"]);
    });

    await t.step("recent_notes (zod): defaults applied, invalid arguments an isError", async () => {
      const newest = await reader.callTool("recent_notes");
      assert.equal(newest.content[0].text, "notes://2 Trip\nnotes://1 Groceries");
      const oldest = await reader.callTool("recent_notes", { order: "oldest", limit: 1 });
      assert.equal(oldest.content[0].text, "notes://1 Groceries");
      const invalid = await reader.callTool("recent_notes", { limit: 0 });
      assert.equal(invalid.isError, true);
      assert.match(invalid.content[0].text as string, /recent_notes: limit: Too small/);
    });

    await t.step("owners delete; index subscribers hear of it", async () => {
      const events: string[] = [];
      const stop = notes.notify.subscribe((event) => {
        if (event.type === "resource_updated") events.push(event.uri);
      });
      const deleted = await owner.callTool("delete_note", { id: "1" });
      stop();
      assert.deepEqual(deleted.content, [{ type: "text", text: "Deleted note 1" }]);
      assert.deepEqual(events, ["notes://index"]);
      await assert.rejects(reader.readResource("notes://1"), { message: "No note with id 1" });
    });
  } finally {
    reader.close();
    owner.close();
  }
});

Deno.test("notes: on stdio the local user is the owner", async () => {
  const client = await connect(notes, { version: "2025-11-25", transport: "stdio" });
  try {
    assert.match(client.initializeResult!.instructions as string, /^Notes you own/);
    assert.ok(names((await client.listTools()).tools).includes("delete_note"));
  } finally {
    client.close();
  }
});
