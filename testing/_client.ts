/**
 * An in-process client for testing a server: the engine path real
 * transports use, no sockets, no processes.
 *
 * @module
 */

import type { McpServer } from "@anubis/core";
import {
  Engine,
  type Exchange,
  isNotification,
  isRequest,
  type JsonRpcMessage,
  type Registry,
  type Session,
} from "@anubis/core/engine";
import { createDefaultRegistry } from "@anubis/dialects";

/** The newest stateless protocol version, the default. */
const STATELESS = "2026-07-28";
const MAX_INPUT_ROUNDS = 16;

/**
 * How {@link connect} speaks to the server.
 *
 * @example
 * ```ts
 * import type { ConnectOptions } from "@anubis/testing";
 * import assert from "node:assert/strict";
 * const options: ConnectOptions = { version: "2025-11-25" };
 * assert.equal(options.version, "2025-11-25");
 * ```
 */
export interface ConnectOptions {
  /** The dialects; `createDefaultRegistry()` from `@anubis/dialects` by default. */
  registry?: Registry;
  /**
   * The protocol version: a legacy one (`2025-11-25`…) opens a session with
   * `initialize`; `2026-07-28` (the default) sends stateless requests.
   */
  version?: string;
  /** Answers `elicitation/create` (and declares the elicitation capability). */
  elicit?: (params: Record<string, unknown>) => unknown;
  /** Answers `sampling/createMessage` (and declares the sampling capability). */
  sample?: (params: Record<string, unknown>) => unknown;
  /** The client's roots (and declares the roots capability). */
  roots?: { uri: string; name?: string }[];
  /** Sees `notifications/progress` params (every request then carries a progress token). */
  onProgress?: (params: Record<string, unknown>) => void;
  /** Sees `notifications/message` params (log messages). */
  onLog?: (params: Record<string, unknown>) => void;
  /** The transport kind the server sees (`frame.context.transport`); `"test"` by default. */
  transport?: string;
  /** What a middleware would attach to every request (`frame.context.assigns`). */
  assigns?: Record<string, unknown>;
}

/**
 * What {@link connect} returns: one method per client request; each resolves
 * to the result, and rejects with the JSON-RPC error (`code`, `message`).
 *
 * @example
 * ```ts
 * import type { TestClient } from "@anubis/testing";
 * import assert from "node:assert/strict";
 * const names = async (client: TestClient) => (await client.listTools()).tools.map((t) => t.name);
 * assert.equal(typeof names, "function");
 * ```
 */
export interface TestClient {
  /** The version spoken. */
  readonly version: string;
  /** What `initialize` answered (legacy versions). */
  readonly initializeResult?: Record<string, unknown>;
  /** Any request. */
  request(method: string, params?: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** `tools/list`. */
  listTools(): Promise<{ tools: Record<string, unknown>[] } & Record<string, unknown>>;
  /** `tools/call`. */
  callTool(
    name: string,
    args?: Record<string, unknown>,
  ): Promise<
    & { content: Record<string, unknown>[]; isError?: boolean; structuredContent?: unknown }
    & Record<string, unknown>
  >;
  /** `resources/list`. */
  listResources(): Promise<{ resources: Record<string, unknown>[] } & Record<string, unknown>>;
  /** `resources/read`. */
  readResource(
    uri: string,
  ): Promise<{ contents: Record<string, unknown>[] } & Record<string, unknown>>;
  /** `prompts/list`. */
  listPrompts(): Promise<{ prompts: Record<string, unknown>[] } & Record<string, unknown>>;
  /** `prompts/get`. */
  getPrompt(
    name: string,
    args?: Record<string, string>,
  ): Promise<{ messages: Record<string, unknown>[] } & Record<string, unknown>>;
  /** `completion/complete`. */
  complete(
    ref: Record<string, unknown>,
    argument: { name: string; value: string },
  ): Promise<{ completion: { values: string[] } & Record<string, unknown> }>;
  /** Ends the session and the engine. */
  close(): void;
}

/** A JSON-RPC error answer, as {@link TestClient} methods reject with it. */
class RpcError extends Error {
  constructor(readonly code: number, message: string, readonly data?: unknown) {
    super(message);
  }
}

/**
 * Connects an in-process client to a server: a legacy version runs
 * `initialize` first and keeps one session; `2026-07-28` sends each request
 * on its own, answering `input_required` rounds with `elicit`, `sample` and
 * `roots`. Requests go through the engine as a transport's would.
 *
 * @param server The server under test.
 * @param options The version, the client's answers, and the registry (the
 *   default one of `@anubis/dialects` unless given).
 * @returns The client.
 *
 * @example
 * ```ts
 * import { defineServer } from "@anubis/core";
 * import { connect } from "@anubis/testing";
 * import assert from "node:assert/strict";
 *
 * const server = defineServer({
 *   name: "weather",
 *   version: "1.0.0",
 *   tools: [{
 *     name: "forecast",
 *     inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
 *     handler: ({ city }) => `Sunny in ${city}`,
 *   }],
 * });
 * const client = await connect(server);
 * const result = await client.callTool("forecast", { city: "Oslo" });
 * assert.deepEqual(result.content, [{ type: "text", text: "Sunny in Oslo" }]);
 * client.close();
 * ```
 */
export async function connect(
  server: McpServer,
  options: ConnectOptions = {},
): Promise<TestClient> {
  await server.ready;
  const version = options.version ?? STATELESS;
  const registry = options.registry ?? createDefaultRegistry();
  const engine = new Engine(server, { registry });
  const stateless = registry.get(version)?.era === "stateless";
  const capabilities: Record<string, unknown> = {};
  if (options.elicit) capabilities.elicitation = { form: {} };
  if (options.sample) capabilities.sampling = {};
  if (options.roots) capabilities.roots = {};
  let session: Session | undefined;
  let nextId = 0;
  const transport = options.transport ?? "test";
  const assigns = options.assigns;
  let exchange: Exchange;

  const answer = (method: string, params: Record<string, unknown>): unknown => {
    if (method === "elicitation/create" && options.elicit) return options.elicit(params);
    if (method === "sampling/createMessage" && options.sample) return options.sample(params);
    if (method === "roots/list" && options.roots) return { roots: options.roots };
    throw new RpcError(-32601, `The test client does not answer ${method}`);
  };
  const received = async (message: JsonRpcMessage) => {
    if (isNotification(message)) {
      const params = (message.params ?? {}) as Record<string, unknown>;
      if (message.method === "notifications/progress") options.onProgress?.(params);
      if (message.method === "notifications/message") options.onLog?.(params);
    } else if (isRequest(message)) {
      let reply: JsonRpcMessage;
      try {
        const result = await answer(
          message.method,
          (message.params ?? {}) as Record<string, unknown>,
        );
        reply = { jsonrpc: "2.0", id: message.id, result: result as Record<string, unknown> };
      } catch (error) {
        const code = error instanceof RpcError ? error.code : -32603;
        reply = { jsonrpc: "2.0", id: message.id, error: { code, message: String(error) } };
      }
      await engine.handle(reply, exchange);
    }
  };
  const send = async (method: string, params: Record<string, unknown>) => {
    const reply = await engine.handle({ jsonrpc: "2.0", id: ++nextId, method, params }, exchange);
    if (!reply) throw new Error(`No answer to ${method}`);
    const message = reply.message as {
      result?: Record<string, unknown>;
      error?: { code: number; message: string; data?: unknown };
    };
    if (message.error) {
      throw new RpcError(message.error.code, message.error.message, message.error.data);
    }
    return message.result!;
  };
  const meta: Record<string, unknown> = {
    "io.modelcontextprotocol/protocolVersion": version,
    "io.modelcontextprotocol/clientCapabilities": capabilities,
    "io.modelcontextprotocol/clientInfo": { name: "anubis-test-client", version: "1.0.0" },
  };
  // A stateless request gets log messages only when it names a level.
  if (options.onLog) meta["io.modelcontextprotocol/logLevel"] = "debug";
  const statelessRequest = async (method: string, params: Record<string, unknown>) => {
    let round: Record<string, unknown> = {
      ...params,
      _meta: { ...meta, ...params._meta as object },
    };
    for (let i = 0; i < MAX_INPUT_ROUNDS; i++) {
      const result = await send(method, round);
      if (result.resultType !== "input_required") return result;
      const inputResponses: Record<string, unknown> = {};
      const requests = (result.inputRequests ?? {}) as Record<
        string,
        { method: string; params?: Record<string, unknown> }
      >;
      for (const [key, input] of Object.entries(requests)) {
        inputResponses[key] = await answer(input.method, input.params ?? {});
      }
      round = { ...round, inputResponses, requestState: result.requestState };
    }
    throw new Error(`${method} still asked for input after ${MAX_INPUT_ROUNDS} rounds`);
  };

  let initializeResult: Record<string, unknown> | undefined;
  if (stateless) {
    exchange = { transport, assigns, emit: received };
  } else {
    session = engine.createSession({ transport, onMessage: received });
    exchange = { transport, assigns, session, emit: received };
    initializeResult = await send("initialize", {
      protocolVersion: version,
      capabilities,
      clientInfo: { name: "anubis-test-client", version: "1.0.0" },
    });
    await engine.handle({ jsonrpc: "2.0", method: "notifications/initialized" }, exchange);
  }
  let progressTokens = 0;
  const request = (method: string, params: Record<string, unknown> = {}) => {
    if (options.onProgress) {
      params = { ...params, _meta: { progressToken: ++progressTokens, ...params._meta as object } };
    }
    return stateless ? statelessRequest(method, params) : send(method, params);
  };
  // Each method's answer type is stated by TestClient; never is assignable to it.
  const typed = (method: string, params?: Record<string, unknown>) =>
    request(method, params) as Promise<never>;
  return {
    version,
    initializeResult,
    request,
    listTools: () => typed("tools/list"),
    callTool: (name, args = {}) => typed("tools/call", { name, arguments: args }),
    listResources: () => typed("resources/list"),
    readResource: (uri) => typed("resources/read", { uri }),
    listPrompts: () => typed("prompts/list"),
    getPrompt: (name, args = {}) => typed("prompts/get", { name, arguments: args }),
    complete: (ref, argument) => typed("completion/complete", { ref, argument }),
    close: () => engine.close(),
  };
}
