/**
 * Shared pieces of the Streamable HTTP end-to-end tests: a real server on
 * 127.0.0.1 port 0, raw fetch helpers, an SSE reader, and a test server
 * definition.
 */

import { defineServer, type EventStore, type McpServer, type StoredEvent } from "@anubis/core";
import { MemoryEventStore } from "@anubis/event-store-memory";
import {
  createHttpHandler,
  type HttpHandler,
  type HttpHandlerOptions,
} from "@anubis/transport-http";

export const META_2026 = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
};

/** What the test tools observed. */
export const observed = { cancelled: 0, started: 0 };

/** A server with tools for streaming, elicitation, change notifications and cancellation. */
export function testServer(): McpServer {
  return defineServer({
    name: "http-test",
    version: "1.0.0",
    tools: [
      {
        name: "echo",
        inputSchema: { type: "object", properties: { text: { type: "string" } } },
        handler: ({ text }: { text?: string }) => `echo: ${text}`,
      },
      {
        name: "region_echo",
        inputSchema: {
          type: "object",
          properties: { region: { type: "string", "x-mcp-header": "Region" } },
        },
        handler: ({ region }: { region?: string }) => `region: ${region}`,
      },
      {
        name: "count",
        handler: async (_args, frame) => {
          for (let i = 1; i <= 3; i++) await frame.progress(i, { total: 3 });
          return "counted";
        },
      },
      {
        name: "ask",
        handler: async (_args, frame) => {
          const answer = await frame.elicit({
            message: "Name?",
            requestedSchema: {
              type: "object",
              properties: { name: { type: "string" } },
              required: ["name"],
            },
          }, { key: "name" });
          return `Hello, ${answer.content?.name}!`;
        },
      },
      {
        name: "change_tools",
        handler: (_args, frame) => {
          frame.notify.toolsListChanged();
          return "changed";
        },
      },
      {
        name: "wait_for_cancel",
        handler: async (_args, frame) => {
          observed.started++;
          await frame.progress(1);
          await new Promise<void>((resolve) => {
            if (frame.signal.aborted) return resolve();
            frame.signal.addEventListener("abort", () => resolve(), { once: true });
          });
          observed.cancelled++;
          return "cancelled";
        },
      },
      {
        name: "crash",
        handler: () => {
          throw new Error("secret internal detail");
        },
      },
    ],
    resources: [{ uri: "test://r", name: "r", read: () => "r" }],
    prompts: [{
      name: "greet",
      handler: () => [{ role: "user", content: { type: "text", text: "hi" } }],
    }, {
      name: "crash",
      handler: () => {
        throw new Error("prompt failed");
      },
    }],
  });
}

/** The memory store without `tail()` (so live delivery takes the in-process path), and able to fail deletes. */
export class TinyEventStore implements EventStore {
  readonly #inner = new MemoryEventStore();
  readonly deleted: string[] = [];
  failDelete = false;
  append(sessionId: string, data: string): Promise<number> {
    return this.#inner.append(sessionId, data);
  }
  replay(sessionId: string, afterId: number): Promise<StoredEvent[]> {
    return this.#inner.replay(sessionId, afterId);
  }
  latestId(sessionId: string): Promise<number> {
    return this.#inner.latestId(sessionId);
  }
  delete(sessionId: string): Promise<void> {
    if (this.failDelete) return Promise.reject(new Error("store down"));
    this.deleted.push(sessionId);
    return this.#inner.delete(sessionId);
  }
}

/** Polls a condition (bounded), for effects that happen after a response. */
export async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!condition()) throw new Error("condition never held");
}

/** A running test server. */
export interface TestServer {
  url: string;
  handler: HttpHandler;
  close(): Promise<void>;
}

/** Starts the real handler on Deno.serve, 127.0.0.1, port 0. */
export function start(options: HttpHandlerOptions = {}, server = testServer()): TestServer {
  // Listening first: with auth, the resource URL (the audience) is the served one.
  const httpServer = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (request, info) => handler(request, info),
  );
  const url = `http://127.0.0.1:${httpServer.addr.port}/mcp`;
  const auth = options.auth && { resource: url, ...options.auth };
  const handler = createHttpHandler(server, { keepAliveMs: 0, ...options, auth });
  return {
    url,
    handler,
    async close() {
      handler.close();
      await httpServer.shutdown();
    },
  };
}

export const JSON_HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
};

/** POSTs a body (an object is JSON-encoded). */
export function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { ...JSON_HEADERS, ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** The headers a 2026-07-28 request needs. */
export function headers2026(method: string, name?: string): Record<string, string> {
  const headers: Record<string, string> = {
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": method,
  };
  if (name !== undefined) headers["mcp-name"] = name;
  return headers;
}

/** A 2026-07-28 request body. */
export function request2026(
  id: number | string,
  method: string,
  params: Record<string, unknown> = {},
  meta: Record<string, unknown> = {},
): Record<string, unknown> {
  return { jsonrpc: "2.0", id, method, params: { ...params, _meta: { ...META_2026, ...meta } } };
}

/** One parsed SSE event (comments have `comment`). */
export interface ParsedEvent {
  id?: string;
  event?: string;
  data?: string;
  retry?: string;
  comment?: string;
}

/** Reads SSE events from a response body one at a time. */
export class SseReader {
  readonly #reader: ReadableStreamDefaultReader<string>;
  #buffer = "";
  #events: ParsedEvent[] = [];

  constructor(response: Response) {
    this.#reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  }

  /** The next event, or `undefined` at the end of the stream. Comments are skipped unless asked. */
  async next(comments = false): Promise<ParsedEvent | undefined> {
    while (true) {
      while (this.#events.length > 0) {
        const event = this.#events.shift()!;
        if (comments || event.comment === undefined) return event;
      }
      const { value, done } = await this.#reader.read();
      if (done) return undefined;
      this.#buffer += value;
      let end;
      while ((end = this.#buffer.indexOf("\n\n")) !== -1) {
        const block = this.#buffer.slice(0, end);
        this.#buffer = this.#buffer.slice(end + 2);
        const event: ParsedEvent = {};
        for (const line of block.split("\n")) {
          if (line.startsWith(":")) event.comment = line.slice(1).trim();
          const colon = line.indexOf(":");
          if (colon <= 0) continue;
          const field = line.slice(0, colon) as keyof ParsedEvent;
          const value = line.slice(colon + 1).replace(/^ /, "");
          event[field] = event[field] === undefined ? value : `${event[field]}\n${value}`;
        }
        this.#events.push(event);
      }
    }
  }

  /** The next `message` event's JSON. */
  async message(): Promise<Record<string, unknown>> {
    while (true) {
      const event = await this.next();
      if (!event) throw new Error("stream ended");
      if (event.data) return JSON.parse(event.data);
    }
  }

  /** Every remaining message until the stream ends. */
  async rest(): Promise<Record<string, unknown>[]> {
    const all: Record<string, unknown>[] = [];
    for (let e = await this.next(); e; e = await this.next()) {
      if (e.data) all.push(JSON.parse(e.data));
    }
    return all;
  }

  /** Stops reading (the client disconnects). */
  async cancel(): Promise<void> {
    await this.#reader.cancel();
  }
}

/** An `initialize` request body. */
export function initializeRequest(
  id: number,
  version = "2025-11-25",
  capabilities: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    jsonrpc: "2.0",
    id,
    method: "initialize",
    params: { protocolVersion: version, capabilities, clientInfo: { name: "raw", version: "0" } },
  };
}

/** Runs a legacy handshake and returns the session id. */
export async function initialize(
  url: string,
  version = "2025-11-25",
  capabilities: Record<string, unknown> = {},
): Promise<string> {
  const response = await post(url, initializeRequest(0, version, capabilities));
  await response.body?.cancel();
  const id = response.headers.get("mcp-session-id");
  if (response.status !== 200 || !id) throw new Error(`initialize failed: ${response.status}`);
  const initialized = await post(url, { jsonrpc: "2.0", method: "notifications/initialized" }, {
    "mcp-session-id": id,
  });
  await initialized.body?.cancel();
  return id;
}
