/**
 * The in-process test client of `@anubis/testing`, as a user's own
 * tests would use it: a legacy session and stateless requests, elicitation
 * answered in both eras, progress and logs seen, errors rejected.
 */

import assert from "node:assert/strict";
import { z } from "zod";
import { defineServer, defineTool } from "@anubis/core";
import { connect } from "@anubis/testing";

const server = defineServer({
  name: "notes",
  version: "1.0.0",
  tools: [
    {
      name: "add",
      inputSchema: z.object({ a: z.number(), b: z.number().default(1) }),
      handler: ({ a, b }) => `${a + b}`,
    },
    {
      name: "ask",
      handler: async (_args, frame) => {
        await frame.progress(1, { total: 2 });
        await frame.log("info", "asking");
        const answer = await frame.elicit({
          message: "Name?",
          requestedSchema: { type: "object", properties: { name: { type: "string" } } },
        }, { key: "name" });
        return `Hello, ${answer.content?.name}`;
      },
    },
    defineTool({
      name: "measure",
      inputSchema: z.object({ broken: z.boolean().default(false) }),
      outputSchema: z.object({ celsius: z.number() }),
      handler: ({ broken }) => ({
        content: [],
        // A server bug the types would refuse, forced through to test the answer.
        structuredContent: broken ? { celsius: "warm" } as never : { celsius: 21 },
      }),
    }),
  ],
  prompts: [{
    name: "greet",
    arguments: [{ name: "who", required: true }],
    handler: ({ who }) => [{ role: "user", content: { type: "text", text: `Greet ${who}` } }],
  }],
  resourceTemplates: [{
    uriTemplate: "notes://{id}",
    name: "note",
    read: (_u, { id }) => `#${id}`,
  }],
});

for (const version of ["2025-11-25", "2026-07-28"]) {
  Deno.test(`test client (${version}): tools, prompts, resources, elicitation`, async () => {
    const progress: unknown[] = [];
    const client = await connect(server, {
      version,
      elicit: () => ({ action: "accept", content: { name: "Ada" } }),
      onProgress: (p) => progress.push(p.progress),
    });
    try {
      assert.deepEqual((await client.listTools()).tools.map((t) => t.name), [
        "add",
        "ask",
        "measure",
      ]);
      const measured = await client.callTool("measure");
      assert.deepEqual(measured.structuredContent, { celsius: 21 });
      // Output that violates outputSchema is the server's fault: an internal error.
      await assert.rejects(client.callTool("measure", { broken: true }), { code: -32603 });
      assert.equal((await client.callTool("add", { a: 2 })).content[0].text, "3");
      const invalid = await client.callTool("add", { a: "x" });
      assert.equal(invalid.isError, true);
      assert.equal((await client.callTool("ask")).content[0].text, "Hello, Ada");
      const prompt = await client.getPrompt("greet", { who: "Bo" });
      assert.deepEqual(prompt.messages[0].content, { type: "text", text: "Greet Bo" });
      const read = await client.readResource("notes://7");
      assert.equal(read.contents[0].text, "#7");
      await assert.rejects(client.callTool("missing"), { code: -32602 });
      // Stateless: the handler runs again with the answer, and reports again.
      assert.deepEqual(progress, version === "2025-11-25" ? [1] : [1, 1]);
    } finally {
      client.close();
    }
  });
}

const helpers = defineServer({
  name: "helpers",
  version: "1.0.0",
  tools: [{
    name: "summarize",
    handler: async (_args, frame) => {
      await frame.log("info", "summarizing");
      const roots = await frame.listRoots({ key: "roots" });
      const sampled = await frame.sample({
        messages: [{ role: "user", content: { type: "text", text: "Say hi" } }],
        maxTokens: 10,
      }, { key: "sample" });
      const text = (sampled.content as { text: string }).text;
      return `${roots.roots.map((r) => r.uri).join(",")} ${text}`;
    },
  }],
  prompts: [{
    name: "greet",
    arguments: [{
      name: "who",
      complete: (value) => ["Ada", "Bo"].filter((n) => n.startsWith(value)),
    }],
    handler: ({ who }) => [{ role: "user", content: { type: "text", text: `Greet ${who}` } }],
  }],
  resources: [{ uri: "notes://readme", name: "readme", read: () => "Read me" }],
});

for (const version of ["2025-11-25", "2026-07-28"]) {
  Deno.test(`test client (${version}): logs, sampling, roots, lists and completion`, async () => {
    const logs: unknown[] = [];
    const client = await connect(helpers, {
      version,
      sample: () => ({
        role: "assistant",
        content: { type: "text", text: "hi" },
        model: "test",
      }),
      roots: [{ uri: "file:///notes", name: "notes" }],
      onLog: (params) => logs.push(params.data),
    });
    try {
      const called = await client.callTool("summarize");
      assert.equal(called.content[0].text, "file:///notes hi");
      // Stateless: the handler runs once per input round, logging each time.
      assert.ok(logs.length >= 1 && logs.every((data) => data === "summarizing"), `${logs}`);
      assert.deepEqual((await client.listPrompts()).prompts.map((p) => p.name), ["greet"]);
      assert.deepEqual((await client.listResources()).resources.map((r) => r.uri), [
        "notes://readme",
      ]);
      const completed = await client.complete(
        { type: "ref/prompt", name: "greet" },
        { name: "who", value: "A" },
      );
      assert.deepEqual(completed.completion.values, ["Ada"]);
    } finally {
      client.close();
    }
  });
}

const context = defineServer({
  name: "context",
  version: "1.0.0",
  tools: [{
    name: "whoami",
    handler: (_args, frame) => `${frame.context.transport} ${frame.context.assigns.role}`,
  }],
});

for (const version of ["2025-11-25", "2026-07-28"]) {
  Deno.test(`test client (${version}): transport and request assigns reach the frame`, async () => {
    const plain = await connect(context, { version });
    const owner = await connect(context, {
      version,
      transport: "http",
      assigns: { role: "owner" },
    });
    try {
      assert.equal((await plain.callTool("whoami")).content[0].text, "test undefined");
      assert.equal((await owner.callTool("whoami")).content[0].text, "http owner");
    } finally {
      plain.close();
      owner.close();
    }
  });
}
