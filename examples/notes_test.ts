/**
 * The notes example in process, with the real dialects: roles from
 * `init` and request assigns, `serverTools`, frame-dependent instructions,
 * cache hints, the template, the index resource and the prompt.
 */

import assert from "node:assert/strict";
import { Engine, type Exchange, type Reply } from "@anubis/core/engine";
import { createDefaultRegistry } from "@anubis/dialects";
import notes from "./notes.ts";

const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
};

/** A stateless request over HTTP with the given request assigns. */
function client(engine: Engine, assigns: Record<string, unknown>) {
  let id = 0;
  return async (method: string, params: Record<string, unknown> = {}) => {
    const exchange: Exchange = { transport: "http", assigns };
    const reply = await engine.handle(
      { jsonrpc: "2.0", id: ++id, method, params: { ...params, _meta: META } },
      exchange,
    );
    return reply!.message as { result?: Record<string, unknown>; error?: { message: string } };
  };
}

const resultOf = (reply: Reply | undefined) =>
  (reply!.message as unknown as { result: Record<string, unknown> }).result;

const texts = (result: Record<string, unknown> | undefined) =>
  (result!.content as { text: string }[]).map((c) => c.text);

Deno.test("notes: roles, hidden tools, instructions, caching, resources and prompts", async (t) => {
  const engine = new Engine(notes, { registry: createDefaultRegistry() });
  const reader = client(engine, {});
  const owner = client(engine, { role: "owner" });
  try {
    await t.step("readers do not see delete_note; owners do", async () => {
      const listed = (await reader("tools/list")).result!;
      assert.deepEqual((listed.tools as { name: string }[]).map((t) => t.name), [
        "add_note",
        "search_notes",
      ]);
      assert.deepEqual([listed.ttlMs, listed.cacheScope], [300_000, "private"]);
      const refused = await reader("tools/call", { name: "delete_note", arguments: { id: "1" } });
      assert.equal(refused.error!.message, "Unknown tool: delete_note");
      const owned = (await owner("tools/list")).result!;
      assert.deepEqual((owned.tools as { name: string }[]).map((t) => t.name), [
        "add_note",
        "search_notes",
        "delete_note",
      ]);
    });

    await t.step("instructions depend on the role", async () => {
      assert.match((await reader("server/discover")).result!.instructions as string, /^Shared/);
      assert.match((await owner("server/discover")).result!.instructions as string, /^Notes you/);
    });

    await t.step("add, search, read, complete and summarize", async () => {
      const added = (await reader("tools/call", {
        name: "add_note",
        arguments: { title: "Groceries", body: "Milk and bread" },
      })).result!;
      assert.deepEqual(added.content, [{
        type: "resource_link",
        uri: "notes://1",
        name: "Groceries",
      }]);
      assert.deepEqual(added.structuredContent, { id: "1", uri: "notes://1" });
      await reader("tools/call", {
        name: "add_note",
        arguments: { title: "Trip", body: "Buy bread for the road" },
      });
      const found = await reader("tools/call", {
        name: "search_notes",
        arguments: { query: "bread" },
      });
      assert.deepEqual(texts(found.result), ["notes://1 Groceries\nnotes://2 Trip"]);
      const read = (await reader("resources/read", { uri: "notes://2" })).result!;
      assert.deepEqual(read.contents, [{
        uri: "notes://2",
        mimeType: "text/markdown",
        text: "# Trip\n\nBuy bread for the road",
      }]);
      assert.deepEqual([read.ttlMs, read.cacheScope], [5_000, "private"]);
      const index = (await reader("resources/read", { uri: "notes://index" })).result!;
      assert.equal(
        (index.contents as { text: string }[])[0].text,
        "- [Groceries](notes://1)\n- [Trip](notes://2)",
      );
      const completed = await reader("completion/complete", {
        ref: { type: "ref/resource", uri: "notes://{id}" },
        argument: { name: "id", value: "2" },
      });
      assert.deepEqual((completed.result!.completion as { values: string[] }).values, ["2"]);
      const prompt = (await reader("prompts/get", {
        name: "summarize_notes",
        arguments: { topic: "milk" },
      })).result!;
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
      const prompts = (await reader("prompts/list")).result!;
      assert.deepEqual([prompts.ttlMs, prompts.cacheScope], [3_600_000, "public"]);
    });

    await t.step("owners delete; index subscribers hear of it", async () => {
      const events: string[] = [];
      const stop = notes.notify.subscribe((event) => {
        if (event.type === "resource_updated") events.push(event.uri);
      });
      const deleted = await owner("tools/call", { name: "delete_note", arguments: { id: "1" } });
      stop();
      assert.deepEqual(texts(deleted.result), ["Deleted note 1"]);
      assert.deepEqual(events, ["notes://index"]);
      const gone = await reader("resources/read", { uri: "notes://1" });
      assert.equal(gone.error!.message, "No note with id 1");
    });

    await t.step("on stdio the local user is the owner", async () => {
      const session = engine.createSession({ transport: "stdio" });
      const exchange: Exchange = { session, transport: "stdio" };
      const initialized = await engine.handle({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "c", version: "1" },
        },
      }, exchange);
      assert.match(resultOf(initialized).instructions as string, /^Notes you own/);
      await engine.handle({ jsonrpc: "2.0", method: "notifications/initialized" }, exchange);
      const listed = await engine.handle(
        { jsonrpc: "2.0", id: 2, method: "tools/list" },
        exchange,
      );
      const tools = resultOf(listed).tools as { name: string }[];
      assert.ok(tools.some((tool) => tool.name === "delete_note"));
      engine.dropSession(session);
    });
  } finally {
    engine.close();
  }
});
