/**
 * Every message a real Engine sends, at every version, against the official
 * spec JSON schema of that version (the conformance suite's
 * `wire-schema-valid` check): results, errors, notifications and
 * server-to-client requests, for a server with tools, resources, templates,
 * prompts, completion, progress, logging and user input.
 */

import assert from "node:assert/strict";
import { defineServer, McpError, type McpServer, type ServerDefinition } from "@anubis/core";
import { Engine, type JsonRpcMessage } from "@anubis/core/engine";
import everything from "../../examples/everything.ts";
import { createDefaultRegistry } from "@anubis/dialects";
import * as s from "@anubis/core/schema";
import { type SpecSchema, specSchemas } from "../helpers/spec_schemas.ts";

type Obj = Record<string, unknown>;

const definition: ServerDefinition = {
  name: "wire",
  version: "1.0.0",
  title: "Wire",
  description: "every field",
  websiteUrl: "https://example.com",
  instructions: "Say hello.",
  tools: [
    {
      name: "echo",
      title: "Echo",
      description: "Echoes its text",
      inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
      outputSchema: { type: "object", properties: { text: { type: "string" } } },
      annotations: { readOnlyHint: true },
      handler: ({ text }: { text: string }) => ({
        content: [{ type: "text", text }],
        structuredContent: { text },
      }),
    },
    {
      name: "work",
      description: "Logs and reports progress",
      handler: async (_args, frame) => {
        await frame.log("info", { step: 1 }, "work");
        await frame.progress(1, { total: 2, message: "half" });
        await frame.progress(2, { total: 2 });
        return {
          content: [
            { type: "image", data: "AA==", mimeType: "image/png" },
            { type: "audio", data: "AA==", mimeType: "audio/wav" },
            { type: "resource", resource: { uri: "test://hello", text: "hi" } },
            { type: "resource_link", uri: "test://hello", name: "hello" },
          ],
        };
      },
    },
    {
      name: "ask",
      description: "Asks the user, the model and the roots",
      handler: async (_args, frame) => {
        const answer = await frame.elicit({
          message: "Name?",
          requestedSchema: { type: "object", properties: { name: { type: "string" } } },
        }, { key: "name" });
        const sampled = await frame.sample({
          messages: [{ role: "user", content: { type: "text", text: "hi" } }],
          maxTokens: 5,
        }, { key: "model" });
        const roots = await frame.listRoots({ key: "roots" });
        return `${answer.action} ${sampled.model} ${roots.roots.length}`;
      },
    },
    { name: "broken", handler: () => Promise.reject(new Error("boom")) },
  ],
  resources: [{ uri: "test://hello", name: "hello", mimeType: "text/plain", read: () => "hi" }],
  resourceTemplates: [{
    uriTemplate: "test://items/{id}",
    name: "item",
    read: (_uri, { id }) => `item ${id}`,
    complete: { id: (value) => ["1", "2"].filter((v) => v.startsWith(value)) },
  }],
  prompts: [{
    name: "greet",
    description: "Greets someone",
    arguments: [{ name: "who", required: true }],
    handler: ({ who }) => [{ role: "user", content: { type: "text", text: `Greet ${who}` } }],
  }],
} as ServerDefinition;

const registry = createDefaultRegistry();

/** The problems the dialect's own schemas find in what was sent (they must agree with the spec). */
function dialectProblems(version: string, sent: readonly Sent[]): string[] {
  const dialect = registry.get(version)!;
  return sent.flatMap(({ message, method }) => {
    const m = message as unknown as Obj;
    const schema = typeof m.method === "string"
      ? ("id" in m
        ? dialect.serverRequestParamsSchema(m.method)
        : dialect.serverNotificationParamsSchema(m.method))
      : "result" in m && method
      ? dialect.requestResultSchema(method)
      : undefined;
    const value = typeof m.method === "string" ? m.params : m.result;
    if (!schema) return typeof m.method === "string" ? [`no schema for ${m.method}`] : [];
    const checked = s.validate(schema, value);
    return checked.ok ? [] : [`${m.method ?? method}: ${s.formatIssues(checked.issues)}`];
  });
}

/** Params fields of what the server sent on its own that its version does not declare. */
function undeclaredSent(spec: SpecSchema, sent: readonly Sent[]): string[] {
  return sent.flatMap(({ message }) => {
    const m = message as unknown as Obj;
    if (typeof m.method !== "string" || !m.params) return [];
    return spec.undeclaredParams(m.method, m.params as Obj).map((k) => `${m.method} ${k}`);
  });
}

const CLIENT_CAPS = { elicitation: {}, sampling: {}, roots: { listChanged: true } };
const specs = await specSchemas();

/** Every message one run sent, with the request method each response answers. */
interface Sent {
  message: JsonRpcMessage;
  method?: string;
}

function harness(version: string, server: McpServer = defineServer(definition)) {
  const engine = new Engine(server, { registry: createDefaultRegistry() });
  const sent: Sent[] = [];
  const emit = (message: JsonRpcMessage) => {
    sent.push({ message });
    // A legacy client answers the server's requests at once.
    const m = message as unknown as Obj;
    if (typeof m.method === "string" && "id" in m) {
      const result = ANSWERS[m.method];
      queueMicrotask(() =>
        void engine.handle({ jsonrpc: "2.0", id: m.id, result } as never, exchange)
      );
    }
  };
  const session = engine.createSession({ transport: "test", onMessage: emit });
  const exchange = { session, transport: "test", emit };
  let id = 0;
  const stateless = version === "2026-07-28";
  const request = async (method: string, params: Obj = {}, meta: Obj = {}) => {
    const _meta = stateless
      ? {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": CLIENT_CAPS,
        "io.modelcontextprotocol/logLevel": "debug",
        ...meta,
      }
      : meta;
    const message = { jsonrpc: "2.0" as const, id: ++id, method, params: { ...params, _meta } };
    const reply = await engine.handle(message, exchange);
    if (reply) sent.push({ message: reply.message, method });
    return (reply?.message ?? {}) as Obj;
  };
  return { engine, exchange, sent, request };
}

const ANSWERS: Record<string, Obj> = {
  "elicitation/create": { action: "accept", content: { name: "Ann" } },
  "sampling/createMessage": { role: "assistant", content: { type: "text", text: "x" }, model: "m" },
  "roots/list": { roots: [{ uri: "file:///tmp", name: "tmp" }] },
  "ping": {},
};

/** The requests every version answers, the same way a client would send them. */
async function exercise(t: ReturnType<typeof harness>, version: string): Promise<void> {
  const { request } = t;
  if (version !== "2026-07-28") {
    await request("initialize", {
      protocolVersion: version,
      capabilities: CLIENT_CAPS,
      clientInfo: { name: "c", version: "1" },
    });
    await t.engine.handle({ jsonrpc: "2.0", method: "notifications/initialized" }, t.exchange);
    await request("ping");
    await request("logging/setLevel", { level: "debug" });
    await request("resources/subscribe", { uri: "test://hello" });
    await changes(t);
    await request("resources/unsubscribe", { uri: "test://hello" });
  } else {
    await request("server/discover");
  }
  await request("tools/list");
  await request("tools/call", { name: "echo", arguments: { text: "hi" } });
  await request("tools/call", { name: "echo", arguments: { text: 1 } });
  await request("tools/call", { name: "work" }, { progressToken: "p" });
  await request("tools/call", { name: "broken" });
  await request("tools/call", { name: "nope" });
  await request("prompts/list");
  await request("prompts/get", { name: "greet", arguments: { who: "Ann" } });
  await request("resources/list");
  await request("resources/templates/list");
  await request("resources/read", { uri: "test://hello" });
  await request("resources/read", { uri: "test://items/1" });
  await request("resources/read", { uri: "test://missing" });
  await request("completion/complete", {
    ref: { type: "ref/resource", uri: "test://items/{id}" },
    argument: { name: "id", value: "1" },
  });
  await request("no/such/method");
}

for (const version of ["2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]) {
  Deno.test(`engine at ${version}: every message it sends is valid against the spec schema`, async () => {
    const spec = specs.get(version)!;
    const t = harness(version);
    await exercise(t, version);
    if (version === "2026-07-28") await statelessRounds(t);
    else if (version !== "2025-03-26") await t.request("tools/call", { name: "ask" });
    const problems = t.sent.flatMap(({ message, method }) =>
      spec.check(message, method).map((p) => `${method ?? "(emitted)"}: ${p}`)
    );
    assert.deepEqual(problems, []);
    assert.deepEqual(dialectProblems(version, t.sent), []);
    assert.deepEqual(undeclaredSent(spec, t.sent), []);
    const emitted = new Set(t.sent.map(({ message }) => (message as { method?: string }).method));
    const expected = [
      "notifications/progress",
      "notifications/message",
      "notifications/tools/list_changed",
      "notifications/prompts/list_changed",
      "notifications/resources/list_changed",
      "notifications/resources/updated",
      ...(version === "2026-07-28" ? ["notifications/subscriptions/acknowledged"] : []),
      ...(version === "2025-06-18" || version === "2025-11-25"
        ? ["elicitation/create", "sampling/createMessage", "roots/list"]
        : []),
    ];
    assert.deepEqual(expected.filter((m) => !emitted.has(m)), []);
  });
}

/** Every change notification the server can send. */
async function changes(t: ReturnType<typeof harness>): Promise<void> {
  const notify = t.engine.server.notify;
  notify.toolsListChanged();
  notify.promptsListChanged();
  notify.resourcesListChanged();
  notify.resourceUpdated("test://hello");
  await new Promise((resolve) => setTimeout(resolve, 0));
}

/** A listen stream, multi round-trip input, and the three typed errors of 2026. */
async function statelessRounds(t: ReturnType<typeof harness>): Promise<void> {
  const listening = t.request("subscriptions/listen", {
    notifications: {
      toolsListChanged: true,
      promptsListChanged: true,
      resourcesListChanged: true,
      resourceSubscriptions: ["test://hello"],
    },
  });
  await new Promise((resolve) => setTimeout(resolve, 0));
  await changes(t);
  t.engine.close();
  assert.ok((await listening).result, "the listen stream ends with a result");
  // One input per round: the handler asks the user, then the model, then the roots.
  let params: Obj = { name: "ask" };
  for (let round = 0; round < 4; round++) {
    const result = (await t.request("tools/call", params)).result as Obj;
    if (result.resultType === "complete") break;
    assert.equal(result.resultType, "input_required");
    const asked = result.inputRequests as Record<string, { method: string }>;
    const inputResponses = Object.fromEntries(
      Object.entries(asked).map(([key, r]) => [key, ANSWERS[r.method]]),
    );
    params = { name: "ask", requestState: result.requestState, inputResponses };
  }
  const methods = t.sent.flatMap(({ message }) =>
    Object.values(((message as { result?: Obj }).result?.inputRequests ?? {}) as Obj)
      .map((r) => (r as { method: string }).method)
  );
  assert.deepEqual(methods, ["elicitation/create", "sampling/createMessage", "roots/list"]);
  const unsupported = await t.request("tools/list", {}, {
    "io.modelcontextprotocol/protocolVersion": "1999-01-01",
  });
  assert.equal((unsupported.error as Obj).code, -32022);
  const missing = await t.request("tools/call", { name: "ask" }, {
    "io.modelcontextprotocol/clientCapabilities": {},
  });
  assert.equal((missing.error as Obj).code, -32021);
}

Deno.test("2026: the typed errors carry the data their schema requires", () => {
  const spec = specs.get("2026-07-28")!;
  const errors = [
    new McpError(-32020, "Header mismatch"),
    new McpError(-32021, "Missing capability", { requiredCapabilities: { elicitation: {} } }),
    new McpError(-32022, "Unsupported", { supported: ["2026-07-28"], requested: "1" }),
  ];
  for (const e of errors) {
    const message = {
      jsonrpc: "2.0",
      id: 1,
      error: { code: e.code, message: e.message, ...(e.data ? { data: e.data } : {}) },
    };
    assert.deepEqual(spec.check(message), []);
  }
  // And the checker is not vacuous: a 2026 result without `resultType` fails.
  assert.notDeepEqual(
    spec.check({ jsonrpc: "2.0", id: 1, result: { tools: [] } }, "tools/list"),
    [],
  );
});

/** Arguments that satisfy the required properties of a tool's input schema. */
function argumentsFor(schema: Obj | undefined): Obj {
  const props = (schema?.properties ?? {}) as Record<string, Obj>;
  const values: Record<string, unknown> = { string: "x", number: 0.5, integer: 1, boolean: true };
  return Object.fromEntries(
    ((schema?.required ?? []) as string[]).map((key) => {
      const prop = props[key] ?? {};
      const value = Array.isArray(prop.enum) ? prop.enum[0] : values[prop.type as string];
      return [key, value ?? {}];
    }),
  );
}

/** Calls a tool, answering `input_required` rounds, and gives up on tools that never finish. */
async function callTool(t: ReturnType<typeof harness>, name: string, args: Obj): Promise<void> {
  let params: Obj = { name, arguments: args };
  for (let round = 0; round < 5; round++) {
    const reply = await Promise.race([
      t.request("tools/call", params),
      new Promise<Obj>((resolve) => setTimeout(() => resolve({}), 1000)),
    ]);
    const result = reply.result as Obj | undefined;
    if (result?.resultType !== "input_required" || !result.inputRequests) return;
    const asked = result.inputRequests as Record<string, { method: string }>;
    const inputResponses = Object.fromEntries(
      Object.entries(asked).map(([key, r]) => [key, ANSWERS[r.method]]),
    );
    params = { name, arguments: args, requestState: result.requestState, inputResponses };
  }
}

for (const version of ["2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]) {
  Deno.test({
    name:
      `everything server at ${version}: every message it sends is valid against the spec schema`,
    // Tools that wait for what a test client never sends are left behind.
    sanitizeOps: false,
    sanitizeResources: false,
    fn: async () => {
      const spec = specs.get(version)!;
      const t = harness(version, everything);
      if (version === "2026-07-28") {
        await t.request("server/discover");
      } else {
        await t.request("initialize", {
          protocolVersion: version,
          capabilities: CLIENT_CAPS,
          clientInfo: { name: "c", version: "1" },
        });
        await t.engine.handle({ jsonrpc: "2.0", method: "notifications/initialized" }, t.exchange);
        await t.request("logging/setLevel", { level: "debug" });
      }
      const tools = ((await t.request("tools/list")).result as { tools: Obj[] }).tools;
      for (const tool of tools) {
        if (tool.name === "test_slow_operation") continue;
        await callTool(t, tool.name as string, argumentsFor(tool.inputSchema as Obj));
      }
      const prompts = ((await t.request("prompts/list")).result as { prompts: Obj[] }).prompts;
      for (const prompt of prompts) {
        const args = Object.fromEntries(
          ((prompt.arguments ?? []) as Obj[]).map((a) => [a.name, "test://static-text"]),
        );
        await t.request("prompts/get", { name: prompt.name, arguments: args });
      }
      const resources = ((await t.request("resources/list")).result as { resources: Obj[] })
        .resources;
      for (const resource of resources) await t.request("resources/read", { uri: resource.uri });
      const templates = (await t.request("resources/templates/list")).result as {
        resourceTemplates: Obj[];
      };
      for (const template of templates.resourceTemplates) {
        const uri = (template.uriTemplate as string).replace(/\{[^}]+\}/g, "1");
        await t.request("resources/read", { uri });
      }
      const problems = t.sent.flatMap(({ message, method }) =>
        spec.check(message, method).map((p) => `${method ?? "(emitted)"}: ${p}`)
      );
      assert.deepEqual(problems, []);
      assert.deepEqual(dialectProblems(version, t.sent), []);
      assert.deepEqual(undeclaredSent(spec, t.sent), []);
      t.engine.close();
    },
  });
}
