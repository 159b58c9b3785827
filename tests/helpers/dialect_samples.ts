/**
 * Representative values as the engine hands them to a dialect: results of
 * every client request, params of every server notification and request,
 * each with every optional field the newest version knows, so an encoder
 * must drop what its version lacks.
 *
 * Test support only: not published.
 *
 * @module
 */

import type { Implementation, ServerCapabilities } from "@anubis/core";

type Obj = Record<string, unknown>;

/**
 * A server identity with every optional field.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { SERVER_INFO } from "./dialect_samples.ts";
 * assert.equal(SERVER_INFO.name, "wire");
 * ```
 */
export const SERVER_INFO: Implementation = {
  name: "wire",
  version: "1.0.0",
  title: "Wire",
  description: "A server with every field",
  websiteUrl: "https://example.com",
  icons: [{ src: "https://example.com/i.png", mimeType: "image/png", sizes: ["48x48"] }],
};

/**
 * Capabilities declaring everything any version can advertise.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ALL_CAPABILITIES } from "./dialect_samples.ts";
 * assert.ok("tasks" in ALL_CAPABILITIES);
 * ```
 */
export const ALL_CAPABILITIES: ServerCapabilities = {
  experimental: { "x-thing": { on: true } },
  logging: {},
  completions: {},
  prompts: { listChanged: true },
  resources: { subscribe: true, listChanged: true },
  tools: { listChanged: true },
  tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
  extensions: { "io.modelcontextprotocol/tasks": {} },
};

const icons = [{ src: "data:image/png;base64,AA==", mimeType: "image/png", theme: "dark" }];
const annotations = { audience: ["user"], priority: 0.5, lastModified: "2025-01-01T00:00:00Z" };
const meta = { "example.com/tag": "x" };
const text = { type: "text", text: "hello", annotations, _meta: meta };
const image = { type: "image", data: "AA==", mimeType: "image/png", annotations };
const audio = { type: "audio", data: "AA==", mimeType: "audio/wav" };
const embedded = {
  type: "resource",
  resource: { uri: "test://a", mimeType: "text/plain", text: "a", _meta: meta },
  annotations,
};
const blob = { type: "resource", resource: { uri: "test://b", blob: "AA==" } };
const link = {
  type: "resource_link",
  uri: "test://a",
  name: "a",
  title: "A",
  description: "a resource",
  mimeType: "text/plain",
  size: 1,
  annotations,
  icons,
  _meta: meta,
};

/** Every content block kind. */
const CONTENT_BLOCKS: readonly Obj[] = [text, image, audio, embedded, blob, link];

const tool = {
  name: "weather",
  title: "Weather",
  description: "Forecast",
  inputSchema: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: { city: { type: "string" } },
    required: ["city"],
  },
  outputSchema: { type: "object", properties: { t: { type: "number" } }, required: ["t"] },
  annotations: { title: "Weather", readOnlyHint: true, openWorldHint: false },
  execution: { taskSupport: "optional" },
  icons,
  _meta: meta,
};
const bare = { name: "bare", inputSchema: { type: "object", properties: {} } };
// A 2026 tool whose output is not an object: older versions cannot describe it.
const listing = {
  name: "listing",
  inputSchema: { type: "object" },
  outputSchema: { type: "array", items: { type: "number" } },
};

/**
 * What the engine returns for each client request, before encoding: one or
 * more results per method.
 *
 * @param capabilities The capabilities the version advertises.
 * @returns The results, by method.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sampleResults } from "./dialect_samples.ts";
 * assert.equal(sampleResults({})["tools/call"].length, 3);
 * ```
 */
export function sampleResults(capabilities: ServerCapabilities): Record<string, Obj[]> {
  const task = {
    taskId: "t1",
    status: "working",
    statusMessage: "busy",
    createdAt: "2025-11-25T10:30:00Z",
    lastUpdatedAt: "2025-11-25T10:40:00Z",
    ttl: 60000,
    pollInterval: 5000,
  };
  const skill = {
    uri: "skill://notes/SKILL.md",
    frontmatter: { name: "notes", description: "Takes notes", metadata: { version: "1" } },
    resources: [{
      uri: "skill://notes/SKILL.md",
      digest: "sha256:a33620a7587e76a9805b1c2c6e5879cdb28e998f0a79b3524402eaa922492bb8",
      size: 12,
    }],
  };
  const results: Record<string, Obj | Obj[]> = {
    "initialize": {
      protocolVersion: "2025-11-25",
      capabilities,
      serverInfo: SERVER_INFO,
      instructions: "Be nice.",
    },
    "ping": {},
    "logging/setLevel": {},
    "resources/subscribe": {},
    "resources/unsubscribe": {},
    "server/discover": {
      supportedVersions: ["2026-07-28"],
      capabilities,
      instructions: "Be nice.",
    },
    "tools/list": { tools: [tool, bare, listing], nextCursor: "2" },
    "tools/call": [
      { content: CONTENT_BLOCKS, structuredContent: { t: 21.5 }, isError: false, _meta: meta },
      { content: [{ type: "text", text: "[1,2]" }], structuredContent: [1, 2] },
      { content: [{ type: "text", text: "bad input" }], isError: true },
    ],
    "prompts/list": {
      prompts: [{
        name: "greet",
        title: "Greet",
        description: "Greets",
        arguments: [{ name: "who", title: "Who", description: "name", required: true }],
        icons,
        _meta: meta,
      }, { name: "plain" }],
    },
    "prompts/get": {
      description: "greeting",
      messages: CONTENT_BLOCKS.map((content, i) => ({
        role: i % 2 ? "assistant" : "user",
        content,
      })),
    },
    "resources/list": {
      resources: [{
        uri: "test://a",
        name: "a",
        title: "A",
        description: "a",
        mimeType: "text/plain",
        size: 1,
        annotations,
        icons,
        _meta: meta,
      }],
    },
    "resources/templates/list": {
      resourceTemplates: [{
        uriTemplate: "test://items/{id}",
        name: "item",
        title: "Item",
        description: "an item",
        mimeType: "text/plain",
        annotations,
        icons,
        _meta: meta,
      }],
    },
    "resources/read": {
      contents: [
        { uri: "test://a", mimeType: "text/plain", text: "a", _meta: meta },
        { uri: "test://b", mimeType: "application/octet-stream", blob: "AA==" },
      ],
    },
    "completion/complete": { completion: { values: ["Paris"], total: 1, hasMore: false } },
    "subscriptions/listen": { _meta: { "io.modelcontextprotocol/subscriptionId": 7 } },
    "tasks/get": task,
    "tasks/cancel": { ...task, status: "cancelled" },
    // The tasks extension's (2026-07-28) empty ack.
    "tasks/update": {},
    "tasks/list": { tasks: [task], nextCursor: "n" },
    "tasks/result": { content: [text], isError: false },
    // The skills extension's (SEP-2640, 2026-07-28).
    "skills/list": { skills: [skill], nextCursor: "s2" },
    "skills/get": { skill },
    "resources/directory/read": {
      resources: [
        { uri: "skill://notes/SKILL.md", name: "SKILL.md", mimeType: "text/markdown", size: 12 },
        { uri: "skill://notes/references", name: "references", mimeType: "inode/directory" },
      ],
    },
  };
  return Object.fromEntries(
    Object.entries(results).map(([method, r]) => [method, Array.isArray(r) ? r : [r]]),
  );
}

/**
 * Params of every server-to-client notification.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { SAMPLE_NOTIFICATIONS } from "./dialect_samples.ts";
 * assert.equal(SAMPLE_NOTIFICATIONS["notifications/progress"].progress, 1);
 * ```
 */
export const SAMPLE_NOTIFICATIONS: Readonly<Record<string, Obj>> = {
  "notifications/progress": { progressToken: "p1", progress: 1, total: 3, message: "1 of 3" },
  "notifications/message": { level: "info", logger: "db", data: { rows: 3 } },
  "notifications/cancelled": { requestId: 4, reason: "stopped" },
  "notifications/resources/updated": { uri: "test://a" },
  "notifications/resources/list_changed": {},
  "notifications/tools/list_changed": {},
  "notifications/prompts/list_changed": {},
  "notifications/elicitation/complete": { elicitationId: "e1" },
  "notifications/tasks/status": {
    taskId: "t1",
    status: "completed",
    createdAt: "2025-11-25T10:30:00Z",
    lastUpdatedAt: "2025-11-25T10:40:00Z",
    ttl: null,
  },
  "notifications/subscriptions/acknowledged": {
    notifications: { toolsListChanged: true, resourceSubscriptions: ["test://a"] },
  },
};

/**
 * Params of every server-to-client request, as a handler passes them to the frame.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { SAMPLE_SERVER_REQUESTS } from "./dialect_samples.ts";
 * assert.equal(SAMPLE_SERVER_REQUESTS["sampling/createMessage"].maxTokens, 100);
 * ```
 */
export const SAMPLE_SERVER_REQUESTS: Readonly<Record<string, Obj>> = {
  "ping": {},
  "roots/list": {},
  "sampling/createMessage": {
    messages: [{ role: "user", content: { type: "text", text: "Capital of France?" } }],
    maxTokens: 100,
    systemPrompt: "Be brief.",
    includeContext: "none",
    temperature: 0.2,
    stopSequences: ["\n"],
    modelPreferences: { hints: [{ name: "claude" }], speedPriority: 0.5 },
    metadata: {},
  },
  "elicitation/create": {
    mode: "form",
    message: "Your name?",
    requestedSchema: {
      type: "object",
      properties: {
        name: { type: "string", minLength: 1, default: "Ann" },
        age: { type: "integer", minimum: 0 },
        ok: { type: "boolean", default: true },
        color: { type: "string", enum: ["red", "blue"] },
      },
      required: ["name"],
    },
  },
};

/**
 * A URL-mode elicitation, as a 2025-11-25 handler asks it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { SAMPLE_URL_ELICITATION } from "./dialect_samples.ts";
 * assert.equal(SAMPLE_URL_ELICITATION.mode, "url");
 * ```
 */
export const SAMPLE_URL_ELICITATION: Obj = {
  mode: "url",
  message: "Sign in",
  url: "https://example.com/login",
  elicitationId: "e1",
};

/**
 * What a client answers to each server request (bare results, as 2026 input responses are).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { SAMPLE_CLIENT_RESULTS } from "./dialect_samples.ts";
 * assert.equal(SAMPLE_CLIENT_RESULTS["elicitation/create"].action, "accept");
 * ```
 */
export const SAMPLE_CLIENT_RESULTS: Readonly<Record<string, Obj>> = {
  "sampling/createMessage": {
    role: "assistant",
    content: { type: "text", text: "Paris" },
    model: "claude",
    stopReason: "endTurn",
  },
  "roots/list": { roots: [{ uri: "file:///home/a", name: "a" }] },
  "elicitation/create": { action: "accept", content: { name: "Ann", age: 3, ok: true } },
};

/**
 * A sampling answer with tool use, as 2025-11-25 clients may give.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { SAMPLE_TOOL_USE_RESULT } from "./dialect_samples.ts";
 * assert.equal(SAMPLE_TOOL_USE_RESULT.stopReason, "toolUse");
 * ```
 */
export const SAMPLE_TOOL_USE_RESULT: Obj = {
  role: "assistant",
  content: [{ type: "tool_use", id: "u1", name: "weather", input: { city: "Paris" } }],
  model: "claude",
  stopReason: "toolUse",
};
