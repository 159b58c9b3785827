/**
 * The official TypeScript SDK v1 client (`@modelcontextprotocol/sdk@1.32.2`)
 * against the everything server at one legacy version, over any transport:
 * every tool, resource, template and prompt, with exact outputs; progress;
 * logging and `logging/setLevel`; sampling, elicitation and roots answered by
 * the client; change notifications; subscriptions; completion; cancellation.
 *
 * @module
 */

import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  PromptListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import {
  answerElicitation,
  ELICITATION_MESSAGE,
  INTERACTIVE_TEXT,
  PROMPT_ARGUMENTS,
  PROMPT_MESSAGES,
  RESOURCE_CONTENTS,
  ROOTS,
  SAMPLED,
  STATIC_RESULTS,
  textOf,
  TOOL_NAMES,
  until,
} from "./everything_answers.ts";

/** A message as the tests look at it. */
export type Message = { id?: unknown; method?: string; params?: Record<string, unknown> };

/** A connected v1 client and what it saw. */
export interface ConnectedV1 {
  /** The client. */
  client: Client;
  /** The server-to-client requests its handlers answered. */
  asked: Message[];
  /** The notifications its handlers received. */
  notified: Message[];
  /** Every message from the server, as it arrived. */
  received: Message[];
}

/**
 * Connects a v1 client over `transport`, making its `initialize` propose
 * `version`, with handlers that answer every input the everything server asks
 * for, and a record of what it was asked, notified and sent.
 */
export async function connectV1(transport: Transport, version: string): Promise<ConnectedV1> {
  const client = new Client({ name: "sdk-v1", version: "1.0.0" }, {
    capabilities: { sampling: {}, elicitation: {}, roots: {} },
  });
  const asked: Message[] = [];
  client.setRequestHandler(ElicitRequestSchema, (request: Message) => {
    asked.push(request);
    return answerElicitation(request.params!.message as string);
  });
  client.setRequestHandler(CreateMessageRequestSchema, (request: Message) => {
    asked.push(request);
    return SAMPLED;
  });
  client.setRequestHandler(ListRootsRequestSchema, (request: Message) => {
    asked.push(request);
    return ROOTS;
  });
  const notified: Message[] = [];
  for (
    const schema of [
      LoggingMessageNotificationSchema,
      ToolListChangedNotificationSchema,
      PromptListChangedNotificationSchema,
      ResourceUpdatedNotificationSchema,
    ]
  ) {
    client.setNotificationHandler(schema, (n: Message) => void notified.push(n));
  }
  const send = transport.send.bind(transport);
  transport.send = (message: Message, options?: unknown) => {
    if (message.method === "initialize") {
      message = { ...message, params: { ...message.params, protocolVersion: version } };
    }
    return send(message as never, options as never);
  };
  await client.connect(transport);
  // Every message from the server, as it arrived.
  const received: Message[] = [];
  const deliver = transport.onmessage!;
  transport.onmessage = (message: Message, extra?: unknown) => {
    received.push(message);
    deliver(message as never, extra as never);
  };
  return { client, asked, notified, received };
}

const call = (client: Client, name: string, args: Record<string, unknown> = {}) =>
  client.callTool({ name, arguments: args });

/**
 * Runs every step against a connected client.
 *
 * @param t The test context.
 * @param version The version the client proposed.
 * @param connected The client and its records.
 */
export async function runV1Steps(
  t: Deno.TestContext,
  version: string,
  { client, asked, notified, received }: ConnectedV1,
): Promise<void> {
  const elicits = version !== "2025-03-26";
  // The SEP-1034/1330 elicitation forms are 2025-11-25 tools: hidden before.
  const newest = version === "2025-11-25";
  const newestOnly = ["test_elicitation_sep1034_defaults", "test_elicitation_sep1330_enums"];
  const toolNames = newest ? TOOL_NAMES : TOOL_NAMES.filter((n) => !newestOnly.includes(n));
  // Titles arrived with 2025-06-18: the dialect drops them before.
  const title = (text: string) => version === "2025-03-26" ? {} : { title: text };

  await t.step("initialize", () => {
    assert.deepEqual(client.getServerVersion(), {
      name: "anubis-everything",
      version: "1.0.0",
      ...title("Anubis everything server"),
    });
    assert.deepEqual(client.getServerCapabilities(), {
      logging: {},
      tools: { listChanged: true },
      prompts: { listChanged: true },
      resources: { subscribe: true, listChanged: true },
      completions: {},
      // Tasks arrived with 2025-11-25: the dialect drops them before.
      ...(newest ? { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } } : {}),
    });
    assert.match(client.getInstructions()!, /^The MCP conformance everything server/);
  });

  await t.step("tools/list", async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((tool: { name: string }) => tool.name), toolNames);
    const byName = new Map(tools.map((tool: { name: string }) => [tool.name, tool]));
    assert.deepEqual(byName.get("test_simple_text"), {
      name: "test_simple_text",
      description: "Tests simple text content response",
      inputSchema: { type: "object", properties: {} },
    });
    const schema = (byName.get("json_schema_2020_12_tool") as { inputSchema: object })
      .inputSchema as Record<string, unknown>;
    assert.equal(schema.$schema, "https://json-schema.org/draft/2020-12/schema");
    assert.deepEqual(schema.else, { required: ["email"] });
    assert.equal(schema.additionalProperties, false);
    for (const tool of tools as { description?: string }[]) assert.ok(tool.description);
  });

  await t.step("tools without input", async () => {
    for (const [name, expected] of Object.entries(STATIC_RESULTS)) {
      assert.deepEqual(await call(client, name), expected, name);
    }
    const schemaTool = await call(client, "json_schema_2020_12_tool", {
      name: "Ada",
      email: "ada@example.com",
    });
    assert.equal(
      textOf(schemaTool),
      'JSON Schema 2020-12 tool called with: {"name":"Ada","email":"ada@example.com"}',
    );
  });

  await t.step("test_reconnection and test_x_mcp_header", async () => {
    // Over HTTP with an event store the client resumes the closed stream;
    // elsewhere the tool just answers.
    assert.deepEqual(await call(client, "test_reconnection"), {
      content: [{ type: "text", text: "Reconnection test completed successfully" }],
    });
    assert.deepEqual(await call(client, "test_x_mcp_header", { region: "eu-west-1" }), {
      content: [{ type: "text", text: "Region: eu-west-1" }],
    });
    // Invalid arguments are a tool error from 2025-11-25 on, -32602 before.
    if (newest) assert.equal((await call(client, "test_x_mcp_header")).isError, true);
    else await assert.rejects(call(client, "test_x_mcp_header"), /-32602/);
  });

  await t.step("progress", async () => {
    const progress: unknown[] = [];
    const sentBefore = received.length;
    const result = await client.callTool(
      { name: "test_tool_with_progress", arguments: {} },
      undefined,
      { onprogress: (p: unknown) => progress.push(p) },
    );
    const expected = [0, 50, 100].map((step) => ({
      progress: step,
      total: 100,
      message: `Completed step ${step} of 100`,
    }));
    // The server sent all three, before the result.
    const sent = received.slice(sentBefore).filter((m) => m.method === "notifications/progress");
    const token = sent[0].params!.progressToken;
    assert.deepEqual(
      sent.map((m) => m.params),
      expected.map((p) => ({ progressToken: token, ...p })),
    );
    assert.equal(textOf(result), String(token));
    // The v1 client dispatches notifications a microtask late and drops the
    // progress handler when the response arrives, so a last progress read in
    // the same chunk as the result never reaches `onprogress`. All the others do.
    assert.ok(progress.length >= 2, `onprogress saw ${progress.length} of 3`);
    assert.deepEqual(progress, expected.slice(0, progress.length));
  });

  await t.step("logging and logging/setLevel", async () => {
    const logs = () => notified.filter((n) => n.method === "notifications/message");
    await client.setLoggingLevel("info");
    assert.equal(
      textOf(await call(client, "test_tool_with_logging")),
      "Tool with logging executed successfully",
    );
    await until(() => logs().length === 3);
    assert.deepEqual(logs().map((n) => n.params), [
      { level: "info", data: "Tool execution started" },
      { level: "info", data: "Tool processing data" },
      { level: "info", data: "Tool execution completed" },
    ]);
    await client.setLoggingLevel("warning");
    assert.equal(textOf(await call(client, "test_logging_tool")), "Logging tool done");
    await client.setLoggingLevel("debug");
    assert.equal(textOf(await call(client, "test_logging_tool")), "Logging tool done");
    await until(() => logs().length === 5);
    assert.deepEqual(logs().slice(3).map((n) => n.params!.data), [
      "test_logging_tool started",
      "test_logging_tool finished",
    ]);
  });

  await t.step("sampling", async () => {
    const result = await call(client, "test_sampling", { prompt: "Capital of France?" });
    assert.equal(textOf(result), "LLM response: Paris");
    assert.deepEqual(asked.at(-1)!.params, {
      messages: [{ role: "user", content: { type: "text", text: "Capital of France?" } }],
      maxTokens: 100,
    });
  });

  await t.step("elicitation", async () => {
    if (!newest) {
      for (const name of newestOnly) {
        await assert.rejects(call(client, name), new RegExp(`-32602.*Unknown tool: ${name}`));
      }
    }
    if (!elicits) {
      // Elicitation is not part of 2025-03-26: the frame refuses with -32600.
      await assert.rejects(
        call(client, "test_elicitation", { message: ELICITATION_MESSAGE }),
        /-32600.*elicitation\/create is not part of protocol 2025-03-26/,
      );
      return;
    }
    assert.equal(
      textOf(await call(client, "test_elicitation", { message: ELICITATION_MESSAGE })),
      'User response: action=accept, content={"username":"yes","email":"yes@example.com"}',
    );
    // 2025-06-18 has no `mode` field; 2025-11-25 keeps it.
    const mode = version === "2025-11-25" ? { mode: "form" } : {};
    assert.deepEqual(asked.at(-1)!.params, {
      ...mode,
      message: ELICITATION_MESSAGE,
      requestedSchema: {
        type: "object",
        properties: {
          username: { type: "string", description: "User's response" },
          email: { type: "string", description: "User's email address" },
        },
        required: ["username", "email"],
      },
    });
    if (!newest) return;
    assert.equal(
      textOf(await call(client, "test_elicitation_sep1034_defaults")),
      'Elicitation completed: action=accept, content={"name":"John Doe","age":30,"score":95.5,"status":"active","verified":true}',
    );
    const defaults = (asked.at(-1)!.params!.requestedSchema as {
      properties: Record<string, { default: unknown }>;
    }).properties;
    assert.deepEqual(
      Object.fromEntries(Object.entries(defaults).map(([k, v]) => [k, v.default])),
      { name: "John Doe", age: 30, score: 95.5, status: "active", verified: true },
    );
    assert.equal(
      textOf(await call(client, "test_elicitation_sep1330_enums")),
      'Elicitation completed: action=accept, content={"untitledSingle":"option1","titledSingle":"value2","legacyEnum":"opt3","untitledMulti":["option1","option2"],"titledMulti":["value1"]}',
    );
    const enums = (asked.at(-1)!.params!.requestedSchema as {
      properties: Record<string, Record<string, unknown>>;
    }).properties;
    assert.deepEqual(enums.legacyEnum.enumNames, ["Option One", "Option Two", "Option Three"]);
    assert.deepEqual(enums.titledMulti.items, {
      anyOf: [
        { const: "value1", title: "First Choice" },
        { const: "value2", title: "Second Choice" },
        { const: "value3", title: "Third Choice" },
      ],
    });
  });

  await t.step("the diagnostic tools run as real requests on a session", async () => {
    const withoutElicitation = [
      "test_missing_capability",
      "test_input_required_result_sampling",
      "test_input_required_result_list_roots",
    ];
    for (const [name, text] of Object.entries(INTERACTIVE_TEXT)) {
      if (elicits || withoutElicitation.includes(name)) {
        assert.equal(textOf(await call(client, name)), text, name);
      } else if (name === "test_input_required_result_capabilities") {
        // It asks only what the client can answer: no elicitation in 2025-03-26.
        assert.equal(textOf(await call(client, name)), "sample=Paris, roots=file:///test/root");
      } else {
        await assert.rejects(call(client, name), /-32600/, name);
      }
    }
  });

  await t.step("list change notifications", async () => {
    const changed = (method: string) => notified.some((n) => n.method === method);
    await call(client, "test_trigger_tool_change");
    await until(() => changed("notifications/tools/list_changed"));
    await call(client, "test_trigger_prompt_change");
    await until(() => changed("notifications/prompts/list_changed"));
  });

  await t.step("resources", async () => {
    const { resources } = await client.listResources();
    assert.deepEqual(resources.map((r: { uri: string }) => r.uri), [
      "test://static-text",
      "test://static-binary",
      "test://watched-resource",
      // Each skill's SKILL.md (SEP-2640), in every version.
      "skill://pdf-processing/SKILL.md",
      "skill://acme/release-notes/SKILL.md",
    ]);
    const { resourceTemplates } = await client.listResourceTemplates();
    assert.deepEqual(resourceTemplates, [{
      uriTemplate: "test://template/{id}/data",
      name: "template",
      ...title("Resource Template"),
      description: "A resource template with parameter substitution",
      mimeType: "application/json",
    }]);
    for (const [uri, contents] of Object.entries(RESOURCE_CONTENTS)) {
      assert.deepEqual(await client.readResource({ uri }), { contents }, uri);
    }
    await assert.rejects(
      client.readResource({ uri: "test://nonexistent-resource-for-conformance-testing" }),
      /-32002/,
    );
  });

  await t.step("resources/subscribe and notifications/resources/updated", async () => {
    const uri = "test://watched-resource";
    const updates = () => notified.filter((n) => n.method === "notifications/resources/updated");
    assert.deepEqual(await client.subscribeResource({ uri }), {});
    assert.equal(
      textOf(await call(client, "test_trigger_resource_update")),
      `${uri} is now at revision 2`,
    );
    await until(() => updates().length === 1);
    assert.deepEqual(updates()[0].params, { uri });
    assert.deepEqual((await client.readResource({ uri })).contents, [
      { uri, mimeType: "text/plain", text: "Watched resource content (revision 2)" },
    ]);
    assert.deepEqual(await client.unsubscribeResource({ uri }), {});
    await call(client, "test_trigger_resource_update");
    await client.ping();
    assert.equal(updates().length, 1);
  });

  await t.step("prompts", async () => {
    const { prompts } = await client.listPrompts();
    assert.deepEqual(
      prompts.map((p: { name: string }) => p.name),
      Object.keys(PROMPT_MESSAGES),
    );
    for (const prompt of prompts as { description?: string }[]) assert.ok(prompt.description);
    for (const [name, messages] of Object.entries(PROMPT_MESSAGES)) {
      if (name === "test_input_required_result_prompt" && !elicits) {
        await assert.rejects(client.getPrompt({ name }), /-32600/);
        continue;
      }
      const got = await client.getPrompt({ name, arguments: PROMPT_ARGUMENTS[name] });
      assert.deepEqual(got.messages, messages, name);
    }
  });

  await t.step("completion/complete", async () => {
    assert.deepEqual(
      await client.complete({
        ref: { type: "ref/prompt", name: "test_prompt_with_arguments" },
        argument: { name: "arg1", value: "test" },
      }),
      { completion: { values: ["test", "testValue1"] } },
    );
    assert.deepEqual(
      await client.complete({
        ref: { type: "ref/resource", uri: "test://template/{id}/data" },
        argument: { name: "id", value: "4" },
      }),
      { completion: { values: ["456"] } },
    );
  });

  await t.step("cancellation", async () => {
    const controller = new AbortController();
    const cancelled = client.callTool(
      { name: "test_slow_operation", arguments: { seconds: 0.5, label: "first" } },
      undefined,
      { signal: controller.signal },
    );
    const sentBefore = received.length;
    controller.abort("changed my mind");
    await assert.rejects(cancelled, /changed my mind|abort/i);
    // A second, longer run finishes after the first would have: by then
    // the server would have answered the first, had it not been cancelled.
    const second = await call(client, "test_slow_operation", { seconds: 1, label: "second" });
    assert.equal(textOf(second), "second finished after 1 s");
    const answered = received.slice(sentBefore).filter((m) => "result" in m || "error" in m);
    assert.equal(answered.length, 1);
  });

  await t.step("ping", async () => {
    assert.deepEqual(await client.ping(), {});
  });
}
