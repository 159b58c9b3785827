/**
 * The telemetry middleware against in-memory tracer and meter providers
 * registered as the global ones, with no propagator registered (the API's
 * is then a no-op, so the middleware reads `traceparent` itself): opt-in
 * recordings, the URI as a span name's target, notifications, and the
 * session duration of a legacy session that ends.
 */

import assert from "node:assert/strict";
import { AsyncLocalStorage } from "node:async_hooks";
import {
  type Attributes,
  type Context,
  context,
  type ContextManager,
  type Link,
  type MeterProvider,
  metrics,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  type SpanOptions,
  type SpanStatus,
  trace,
  type TracerProvider,
} from "@opentelemetry/api";
import { defineServer, type Frame, type JsonRpcRequest } from "@anubis/core";
import { engineHarness } from "../helpers/engine_harness.ts";
import { Engine } from "@anubis/core/engine";
import { initializeRequest } from "../helpers/http_helpers.ts";
import { connect } from "@anubis/testing";
import { telemetry } from "@anubis/telemetry";
import { createDefaultRegistry } from "@anubis/dialects";

interface Recorded {
  name: string;
  kind?: number;
  attributes: Attributes;
  links: Link[];
  parent?: SpanContext;
  status?: SpanStatus;
  ended: boolean;
}

const spans: Recorded[] = [];
const points: { name: string; value: number; attributes: Attributes }[] = [];
let nextId = 1;

function recordingSpan(record: Recorded): Span {
  const context: SpanContext = {
    traceId: record.parent?.traceId ?? "f".repeat(32),
    spanId: (nextId++).toString(16).padStart(16, "0"),
    traceFlags: 1,
  };
  const span: Span = {
    spanContext: () => context,
    setAttribute: (key, value) => (record.attributes[key] = value, span),
    setAttributes: (attributes) => (Object.assign(record.attributes, attributes), span),
    addEvent: () => span,
    addLink: (link) => (record.links.push(link), span),
    addLinks: (links) => (record.links.push(...links), span),
    setStatus: (status) => (record.status = status, span),
    updateName: (name) => (record.name = name, span),
    end: () => void (record.ended = true),
    isRecording: () => true,
    recordException: () => {},
  };
  return span;
}

const provider: TracerProvider = {
  getTracer: () => ({
    startSpan(name: string, options: SpanOptions = {}, context?: Context) {
      const record: Recorded = {
        name,
        kind: options.kind,
        attributes: { ...options.attributes },
        links: [...(options.links ?? [])],
        parent: context && trace.getSpanContext(context),
        ended: false,
      };
      spans.push(record);
      return recordingSpan(record);
    },
    startActiveSpan: () => {
      throw new Error("not used");
    },
  }),
};
const meters = {
  getMeter: () => ({
    createHistogram: (name: string) => ({
      record: (value: number, attributes: Attributes = {}) =>
        void points.push({ name, value, attributes }),
    }),
  }),
} as unknown as MeterProvider;
trace.setGlobalTracerProvider(provider);
metrics.setGlobalMeterProvider(meters);

const TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

const server = (options: Parameters<typeof telemetry>[0] = {}) =>
  defineServer({
    name: "s",
    version: "1.0.0",
    middleware: [telemetry(options)],
    tools: [{
      name: "greet",
      inputSchema: { type: "object", properties: { who: { type: "string" } }, required: ["who"] },
      handler: ({ who }) => `Hello, ${who}`,
    }],
    resources: [{ uri: "notes://1", name: "note", read: () => "one" }],
  });

Deno.test("telemetry: traceparent parsed without a propagator; opt-in arguments and results", async () => {
  spans.length = 0;
  const client = await connect(
    server({ recordToolArguments: true, recordToolResults: true, uriInSpanName: true }),
    { version: "2025-11-25" },
  );
  try {
    await client.request("tools/call", {
      name: "greet",
      arguments: { who: "Ada" },
      _meta: { traceparent: TRACEPARENT, tracestate: "rojo=00f067aa0ba902b7" },
    });
    await client.readResource("notes://1");
  } finally {
    client.close();
  }
  const call = spans.find((s) => s.name === "tools/call greet")!;
  assert.equal(call.kind, 1); // SERVER
  assert.equal(call.parent?.traceId, "0af7651916cd43dd8448eb211c80319c");
  assert.equal(call.parent?.spanId, "b7ad6b7169203331");
  assert.equal(call.parent?.isRemote, true);
  assert.equal(call.parent?.traceState?.get("rojo"), "00f067aa0ba902b7");
  assert.equal(call.attributes["gen_ai.tool.call.arguments"], '{"who":"Ada"}');
  assert.deepEqual(JSON.parse(String(call.attributes["gen_ai.tool.call.result"])).content, [
    { type: "text", text: "Hello, Ada" },
  ]);
  assert.equal(call.attributes["network.transport"], undefined); // "memory" is not a network
  assert.ok(call.ended);
  const read = spans.find((s) => s.name.startsWith("resources/read"))!;
  assert.equal(read.name, "resources/read notes://1");
  assert.equal(read.attributes["mcp.resource.uri"], "notes://1");
  // Notifications get spans too; a malformed traceparent is no parent.
  const initialized = spans.find((s) => s.name === "notifications/initialized");
  assert.ok(initialized);
});

Deno.test("telemetry: arguments and results are left out unless asked; a bad traceparent is ignored", async () => {
  spans.length = 0;
  const client = await connect(server(), {
    version: "2025-11-25",
  });
  try {
    await client.request("tools/call", {
      name: "greet",
      arguments: { who: "Ada" },
      _meta: { traceparent: "00-not-a-trace-01" },
    });
  } finally {
    client.close();
  }
  const call = spans.find((s) => s.name === "tools/call greet")!;
  assert.equal(call.attributes["gen_ai.tool.call.arguments"], undefined);
  assert.equal(call.attributes["gen_ai.tool.call.result"], undefined);
  assert.equal(call.parent, undefined);
});

Deno.test("telemetry: a legacy session's end is one mcp.server.session.duration point", async () => {
  points.length = 0;
  const engine = new Engine(server(), { registry: createDefaultRegistry() });
  const session = engine.createSession({ id: "s-1", transport: "http" });
  const exchange = { transport: "http", session };
  await engine.handle(initializeRequest(0) as unknown as JsonRpcRequest, exchange);
  engine.dropSession(session);
  engine.dropSession(session); // once only
  engine.close();
  const ended = points.filter((p) => p.name === "mcp.server.session.duration");
  assert.equal(ended.length, 1);
  assert.deepEqual(ended[0].attributes, {
    "mcp.protocol.version": "2025-11-25",
    "network.transport": "tcp",
    "network.protocol.name": "http",
  });
  assert.ok(ended[0].value >= 0 && ended[0].value < 5);
  const operation = points.find((p) => p.name === "mcp.server.operation.duration")!;
  assert.equal(operation.attributes["mcp.method.name"], "initialize");
  assert.equal(operation.attributes["mcp.protocol.version"], "2025-11-25");
});

Deno.test("telemetry: a cancelled request is error.type cancelled, not a JSON-RPC code", async () => {
  spans.length = 0;
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  const t = engineHarness({
    middleware: [telemetry()],
    tools: [{
      name: "wait",
      handler: (_args: unknown, frame: Frame) =>
        new Promise<string>((_, reject) => {
          started();
          frame.signal.addEventListener("abort", () => reject(new Error("aborted")));
        }),
    }],
  });
  await t.initialize();
  const pending = t.engine.handle(
    { jsonrpc: "2.0", id: "w-1", method: "tools/call", params: { name: "wait" } },
    t.exchange,
  );
  await running;
  await t.engine.handle({
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: "w-1" },
  }, t.exchange);
  assert.equal(await pending, undefined);
  const wait = spans.find((s) => s.name === "tools/call wait")!;
  assert.equal(wait.attributes["error.type"], "cancelled");
  assert.equal(wait.attributes["rpc.response.status_code"], undefined);
  assert.ok(wait.ended);
});

Deno.test("telemetry: the request's span is the handler's active one only with activeSpan", async () => {
  const storage = new AsyncLocalStorage<Context>();
  const manager: ContextManager = {
    active: () => storage.getStore() ?? ROOT_CONTEXT,
    with: (active, fn, thisArg, ...args) => storage.run(active, () => fn.apply(thisArg, args)),
    bind: (_active, target) => target,
    enable: () => manager,
    disable: () => manager,
  };
  context.setGlobalContextManager(manager);
  try {
    for (const activeSpan of [false, true]) {
      spans.length = 0;
      const t = engineHarness({
        middleware: [telemetry({ activeSpan })],
        tools: [{
          name: "mark",
          handler: async () => {
            await Promise.resolve(); // still the request's span after an await
            trace.getActiveSpan()?.setAttribute("handler.saw", "this span");
            return "ok";
          },
        }],
      });
      await t.initialize();
      await t.request("tools/call", { name: "mark" });
      const mark = spans.find((s) => s.name === "tools/call mark")!;
      assert.equal(mark.attributes["handler.saw"], activeSpan ? "this span" : undefined);
    }
  } finally {
    context.disable();
  }
});

Deno.test("telemetry: over HTTP the active server span is the call's; httpSpan child, _meta and batches get their own", async () => {
  const storage = new AsyncLocalStorage<Context>();
  const manager: ContextManager = {
    active: () => storage.getStore() ?? ROOT_CONTEXT,
    with: (active, fn, thisArg, ...args) => storage.run(active, () => fn.apply(thisArg, args)),
    bind: (_active, target) => target,
    enable: () => manager,
    disable: () => manager,
  };
  context.setGlobalContextManager(manager);
  try {
    for (const httpSpan of ["annotate", "child"] as const) {
      spans.length = 0;
      const client = await connect(server({ httpSpan }), { transport: "http" });
      // What Deno.serve does with OTEL_DENO=true: a SERVER span active in the handler.
      const http = trace.getTracer("deno").startSpan("POST", { kind: 1 });
      const inHttp = <T>(fn: () => Promise<T>) =>
        context.with(trace.setSpan(ROOT_CONTEXT, http), fn);
      await inHttp(() => client.callTool("greet", { who: "Ada" }));
      http.end();
      if (httpSpan === "annotate") {
        assert.deepEqual(spans.map((s) => s.name), ["tools/call greet"]); // renamed, no second
        assert.equal(spans[0].attributes["mcp.method.name"], "tools/call");
        assert.equal(spans[0].attributes["gen_ai.tool.name"], "greet");
        assert.equal(spans[0].attributes["network.transport"], "tcp");
        assert.equal(spans[0].attributes["mcp.protocol.version"], "2026-07-28");
        assert.equal(typeof spans[0].attributes["jsonrpc.request.id"], "string");
      } else {
        assert.deepEqual(spans.map((s) => s.name), ["POST", "tools/call greet"]);
        assert.equal(spans[1].parent?.spanId, http.spanContext().spanId);
      }
      // A trace context in _meta: a span of its own, the client's span its parent.
      spans.length = 0;
      const other = trace.getTracer("deno").startSpan("POST", { kind: 1 });
      await context.with(
        trace.setSpan(ROOT_CONTEXT, other),
        () =>
          client.request("tools/call", {
            name: "greet",
            arguments: { who: "B" },
            _meta: { traceparent: TRACEPARENT },
          }),
      );
      assert.deepEqual(spans.map((s) => s.name), ["POST", "tools/call greet"]);
      assert.equal(spans[1].parent?.spanId, "b7ad6b7169203331");
      // A second call in the same HTTP request (a batch): the first took the span.
      spans.length = 0;
      const batch = trace.getTracer("deno").startSpan("POST", { kind: 1 });
      await context.with(trace.setSpan(ROOT_CONTEXT, batch), async () => {
        await client.callTool("greet", { who: "C" });
        await client.callTool("greet", { who: "D" });
      });
      assert.equal(spans.filter((s) => s.name === "tools/call greet").length, 2);
      client.close();
    }
  } finally {
    context.disable();
  }
});
