/**
 * `@anubis/telemetry`: OpenTelemetry for an MCP server, following the
 * OpenTelemetry semantic conventions for the Model Context Protocol
 * (`gen-ai/mcp`), as a {@link Middleware}: a SERVER span per request and
 * notification (over HTTP, the request's own server span, named after the
 * call and given its attributes), the `mcp.server.operation.duration` and
 * `mcp.server.session.duration` histograms, and the client's trace context
 * from `params._meta`. It depends only on `npm:@opentelemetry/api`: with no
 * SDK registered (and Deno's built-in OpenTelemetry off) every call is a
 * no-op, and a server that does not import this module does not load it.
 *
 * @example
 * ```ts
 * import { defineServer } from "@anubis/core";
 * import { telemetry } from "@anubis/telemetry";
 * import assert from "node:assert/strict";
 * // On Deno: run with OTEL_DENO=true; on Node: register an OpenTelemetry SDK first.
 * const server = defineServer({ name: "s", version: "1.0.0", middleware: [telemetry()] });
 * assert.equal(server.definition.middleware?.length, 1);
 * ```
 *
 * @module
 */

import {
  type Attributes,
  type Context,
  context as contexts,
  createTraceState,
  type Link,
  metrics,
  propagation,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  trace,
} from "@opentelemetry/api";

import { McpError, type Middleware, type MiddlewareCall, type SessionEnd } from "@anubis/core";
import { NoReply } from "@anubis/core/engine";

/**
 * The bucket boundaries (seconds) the conventions give both duration histograms.
 *
 * @example
 * ```ts
 * import { DURATION_BUCKETS } from "@anubis/telemetry";
 * import assert from "node:assert/strict";
 * assert.equal(DURATION_BUCKETS[0], 0.01);
 * assert.equal(DURATION_BUCKETS.at(-1), 300);
 * ```
 */
export const DURATION_BUCKETS: readonly number[] = Object.freeze([
  0.01,
  0.02,
  0.05,
  0.1,
  0.2,
  0.5,
  1,
  2,
  5,
  10,
  30,
  60,
  120,
  300,
]);

/**
 * Options of {@link telemetry}.
 *
 * @example
 * ```ts
 * import type { TelemetryOptions } from "@anubis/telemetry";
 * import assert from "node:assert/strict";
 * // Tool arguments and results may hold secrets: recorded only when asked;
 * // the handler's own spans are children of the request's span only when asked.
 * const options: TelemetryOptions = { recordToolArguments: true, activeSpan: true };
 * assert.equal(options.recordToolArguments, true);
 * assert.equal(options.activeSpan, true);
 * // Over HTTP, a span of its own under the HTTP server span, and no per-call histogram:
 * const other: TelemetryOptions = { httpSpan: "child", operationMetric: false };
 * assert.equal(other.httpSpan, "child");
 * ```
 */
export interface TelemetryOptions {
  /** Records a tool call's arguments as `gen_ai.tool.call.arguments` (JSON). Off by default. */
  recordToolArguments?: boolean;
  /** Records a tool call's result as `gen_ai.tool.call.result` (JSON). Off by default. */
  recordToolResults?: boolean;
  /**
   * Names a resource request's span after its URI too (`resources/read notes://1`).
   * Off by default: the conventions warn that URIs make span names of high cardinality.
   */
  uriInSpanName?: boolean;
  /**
   * Makes each request's span the active one while its handler runs, so that
   * the spans its code starts (a `fetch`, a database client's) are children
   * of it. Off by default: on Deno's OpenTelemetry it costs more than the
   * span itself (see the module's README for figures); without it those spans
   * are children of the span active before, Deno's HTTP server span over
   * HTTP, and in the same trace.
   */
  activeSpan?: boolean;
  /**
   * Over HTTP, where the server span of the HTTP request (Deno's own with
   * `OTEL_DENO=true`) is the active one: `"annotate"` (the default) names
   * that span after the MCP call and puts the MCP attributes and outcome on
   * it, so a request costs one span, not two; `"child"` starts a span of
   * the middleware's own under it. A call whose `params._meta` carries a
   * trace context, and the second and later calls of one HTTP request (a
   * batch), always get a span of their own.
   */
  httpSpan?: "annotate" | "child";
  /**
   * Records `mcp.server.operation.duration` for every call (on by default).
   * Off, a call costs its span alone; the session histogram stays.
   */
  operationMetric?: boolean;
}

const SCOPE = "@anubis/telemetry";
const DESCRIPTION = {
  operation:
    "MCP request or notification duration as observed on the receiver from the time it was received until the result or ack is sent.",
  session: "The duration of the MCP session as observed on the MCP server.",
};
/** `network.transport` of each transport kind. */
const NETWORK_TRANSPORT: Readonly<Record<string, string>> = { stdio: "pipe", http: "tcp" };
/** Methods whose params name a resource URI. */
const URI_METHODS = new Set([
  "resources/read",
  "resources/subscribe",
  "resources/unsubscribe",
  "notifications/resources/updated",
]);
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(?:-|$)/;
const ZERO_TRACE = "0".repeat(32);
const ZERO_SPAN = "0".repeat(16);

const META_GETTER: TextMapGetter<Readonly<Record<string, unknown>>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => {
    const value = carrier[key];
    return typeof value === "string" ? value : undefined;
  },
};

/** A W3C `traceparent` (and its `tracestate`) as a remote span context; `undefined` when malformed. */
function parseTraceparent(
  traceparent: unknown,
  tracestate?: unknown,
): SpanContext | undefined {
  if (typeof traceparent !== "string") return undefined;
  const match = TRACEPARENT.exec(traceparent.trim());
  if (!match) return undefined;
  const [, version, traceId, spanId, flags] = match;
  if (version === "ff" || traceId === ZERO_TRACE || spanId === ZERO_SPAN) return undefined;
  if (version === "00" && traceparent.trim().length !== 55) return undefined;
  const context: SpanContext = {
    traceId,
    spanId,
    traceFlags: parseInt(flags, 16) & 1,
    isRemote: true,
  };
  if (typeof tracestate === "string" && tracestate) {
    context.traceState = createTraceState(tracestate);
  }
  return context;
}

/** The span's parent: the client's trace context in `_meta`, else the ambient context. */
function parentOf(meta: Readonly<Record<string, unknown>> | undefined): {
  parent: Context;
  fromMeta: boolean;
} {
  const active = contexts.active();
  if (!meta || (meta.traceparent === undefined && meta.baggage === undefined)) {
    return { parent: active, fromMeta: false };
  }
  const parent = propagation.extract(active, meta, META_GETTER);
  if (trace.getSpanContext(parent) !== trace.getSpanContext(active)) {
    return { parent, fromMeta: true };
  }
  // With no propagator registered the API's is a no-op: read traceparent here
  // (a context with only baggage in it stays the parent context).
  const remote = parseTraceparent(meta.traceparent, meta.tracestate);
  if (!remote) return { parent, fromMeta: false };
  return { parent: trace.setSpanContext(parent, remote), fromMeta: true };
}

/** Links: the HTTP request's `traceparent`, and the ambient span when `_meta` gave the parent. */
function linksOf(call: MiddlewareCall, parent: Context, fromMeta: boolean): Link[] | undefined {
  let links: Link[] | undefined;
  const parentSpan = trace.getSpanContext(parent);
  const add = (context: SpanContext | undefined) => {
    if (!context || !trace.isSpanContextValid(context)) return;
    if (parentSpan?.spanId === context.spanId && parentSpan.traceId === context.traceId) return;
    if (links?.some((link) => link.context.spanId === context.spanId)) return;
    (links ??= []).push({ context });
  };
  const headers = call.frame?.context.headers;
  if (headers?.traceparent) add(parseTraceparent(headers.traceparent, headers.tracestate));
  if (fromMeta) add(trace.getSpanContext(contexts.active()));
  return links;
}

/** What a kind of call shares: its metric attributes (frozen) and its span name. */
interface Kind {
  attributes: Attributes;
  name: string;
}

/** How many kinds of call (method, name, version, transport) are kept; more are made each time. */
const MAX_KINDS = 256;

/** The attributes spans and metrics share, for a call's method, tool or prompt name, version and transport. */
function kindOf(
  method: string,
  name: string | undefined,
  version: string | undefined,
  transport: string,
): Kind {
  const attributes: Attributes = { "mcp.method.name": method };
  if (name !== undefined && method === "tools/call") {
    attributes["gen_ai.tool.name"] = name;
    attributes["gen_ai.operation.name"] = "execute_tool";
  } else if (name !== undefined) {
    attributes["gen_ai.prompt.name"] = name;
  }
  if (version) attributes["mcp.protocol.version"] = version;
  addNetwork(attributes, transport);
  return { attributes: Object.freeze(attributes), name: name ? `${method} ${name}` : method };
}

/** `network.transport` (and `network.protocol.name` for HTTP) of a transport kind. */
function addNetwork(attributes: Attributes, transport: string): void {
  const network = NETWORK_TRANSPORT[transport];
  if (network) attributes["network.transport"] = network;
  if (transport === "http") attributes["network.protocol.name"] = "http";
}

/**
 * Marks an error outcome on the span (attributes and ERROR status); returns
 * the metric's attributes with it.
 */
function fail(
  span: Span,
  attributes: Attributes,
  type: string,
  code?: string,
  message = type,
): Attributes {
  const added: Attributes = { "error.type": type };
  if (code !== undefined) added["rpc.response.status_code"] = code;
  span.setAttributes(added);
  span.setStatus({ code: SpanStatusCode.ERROR, message });
  return { ...attributes, ...added };
}

/** The attributes of one call (not of its kind), set on a span made by someone else. */
function addCallAttributes(
  span: Span,
  call: MiddlewareCall,
  uri: string | undefined,
  recordArguments: boolean,
): void {
  if (call.id !== undefined && call.id !== null) {
    span.setAttribute("jsonrpc.request.id", String(call.id));
  }
  if (uri !== undefined) span.setAttribute("mcp.resource.uri", uri);
  const sessionId = call.frame?.context.sessionId;
  if (sessionId) span.setAttribute("mcp.session.id", sessionId);
  if (recordArguments && call.method === "tools/call") {
    const args = json(call.params.arguments ?? {});
    if (args !== undefined) span.setAttribute("gen_ai.tool.call.arguments", args);
  }
}

const json = (value: unknown): string | undefined => {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
};

/**
 * The telemetry middleware: put it first in `middleware` so that its span
 * covers the others. Each request or notification gets a SERVER span named
 * `{mcp.method.name} {target}` (the tool or prompt name; the resource URI
 * with `uriInSpanName`) with the conventions' attributes (`mcp.method.name`,
 * `gen_ai.tool.name`, `gen_ai.prompt.name`, `gen_ai.operation.name`,
 * `jsonrpc.request.id`, `mcp.resource.uri`, `mcp.protocol.version`,
 * `mcp.session.id`, `network.transport`, and on failure `error.type`:
 * `tool_error` for a tool result with `isError`, else the JSON-RPC error code,
 * also in `rpc.response.status_code`; `cancelled` for a request cancelled
 * or whose client went away). The `traceparent`, `tracestate` and
 * `baggage` of `params._meta` make the span's parent (through the global
 * propagator, or parsed here when none is registered); an HTTP `traceparent`
 * header, and the ambient span, are linked. Over HTTP with the request's
 * server span active (Deno's own with `OTEL_DENO=true`) and no trace context
 * in `_meta`, that span is the call's: it is renamed and given the
 * attributes and outcome, and no second span is made (`httpSpan: "child"`
 * makes one). Every call is recorded in
 * `mcp.server.operation.duration`, every initialized legacy session's life
 * in `mcp.server.session.duration` (seconds, {@link DURATION_BUCKETS}).
 * Spans and metrics go to the global OpenTelemetry providers: Deno's own with
 * `OTEL_DENO=true`, or the SDK a Node program registers before serving.
 *
 * @param options The opt-in recordings, and where the span goes over HTTP.
 * @returns The middleware.
 *
 * @example
 * ```ts
 * import { defineServer } from "@anubis/core";
 * import { connect } from "@anubis/testing";
 * import { telemetry } from "@anubis/telemetry";
 * import assert from "node:assert/strict";
 * const server = defineServer({
 *   name: "weather",
 *   version: "1.0.0",
 *   middleware: [telemetry()],
 *   tools: [{ name: "forecast", handler: () => "Sunny" }],
 * });
 * // With no OpenTelemetry SDK registered, the spans and metrics are no-ops.
 * const client = await connect(server);
 * const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
 * const result = await client.request("tools/call", { name: "forecast", _meta: { traceparent } });
 * assert.deepEqual(result.content, [{ type: "text", text: "Sunny" }]);
 * client.close();
 * ```
 */
export function telemetry(options: TelemetryOptions = {}): Middleware {
  const tracer = trace.getTracer(SCOPE);
  const meter = metrics.getMeter(SCOPE);
  const advice = { explicitBucketBoundaries: [...DURATION_BUCKETS] };
  const operations = meter.createHistogram("mcp.server.operation.duration", {
    unit: "s",
    description: DESCRIPTION.operation,
    advice,
  });
  const sessions = meter.createHistogram("mcp.server.session.duration", {
    unit: "s",
    description: DESCRIPTION.session,
    advice,
  });

  const activeSpan = options.activeSpan === true;
  const annotate = options.httpSpan !== "child";
  const operationMetric = options.operationMetric !== false;
  const kinds = new Map<string, Kind>();
  /** HTTP server spans a call was put on already: a batch's later calls get spans of their own. */
  const annotated = new WeakSet<Span>();

  const middleware: Middleware = async (call, next) => {
    const started = performance.now();
    const { method, params, id, transport } = call;
    const context = call.frame?.context;
    const name = (method === "tools/call" || method === "prompts/get") &&
        typeof params.name === "string"
      ? params.name
      : undefined;
    const version = context?.protocolVersion ??
      (typeof params.protocolVersion === "string" ? params.protocolVersion : undefined);
    // One frozen attributes object and span name per kind of call, made once;
    // the key's parts are length-prefixed, so no two kinds share one.
    const key = `${transport.length}:${transport}${version?.length ?? -1}:${version ?? ""}` +
      `${method.length}:${method}${name === undefined ? "-" : `+${name}`}`;
    let kind = kinds.get(key);
    if (!kind) {
      kind = kindOf(method, name, version, transport);
      if (kinds.size < MAX_KINDS) kinds.set(key, kind);
    }
    let attributes = kind.attributes; // the metric's
    const meta = params._meta as Readonly<Record<string, unknown>> | undefined;
    const metaContext = meta !== undefined &&
      (meta.traceparent !== undefined || meta.baggage !== undefined);
    const uri = URI_METHODS.has(method) && typeof params.uri === "string" ? params.uri : undefined;
    const spanName = uri !== undefined && options.uriInSpanName ? `${method} ${uri}` : kind.name;
    // Over HTTP with the request's server span active, that span is the call's.
    const http = annotate && !metaContext && transport === "http"
      ? trace.getActiveSpan()
      : undefined;
    let span: Span;
    let owned: boolean;
    let parent: Context | undefined;
    if (http !== undefined && !annotated.has(http)) {
      annotated.add(http);
      span = http;
      owned = false;
      if (span.isRecording()) {
        span.updateName(spanName);
        span.setAttributes(kind.attributes);
        addCallAttributes(span, call, uri, options.recordToolArguments === true);
      }
    } else {
      const spanAttributes: Attributes = { ...kind.attributes };
      if (id !== undefined && id !== null) spanAttributes["jsonrpc.request.id"] = String(id);
      if (uri !== undefined) spanAttributes["mcp.resource.uri"] = uri;
      const sessionId = context?.sessionId;
      if (sessionId) spanAttributes["mcp.session.id"] = sessionId;
      if (options.recordToolArguments && method === "tools/call") {
        const args = json(params.arguments ?? {});
        if (args !== undefined) spanAttributes["gen_ai.tool.call.arguments"] = args;
      }
      const found = parentOf(meta);
      parent = found.parent;
      span = tracer.startSpan(
        spanName,
        {
          kind: SpanKind.SERVER,
          attributes: spanAttributes,
          links: linksOf(call, parent, found.fromMeta),
        },
        parent,
      );
      owned = true;
    }
    try {
      // With `activeSpan`, the span is the handler's ambient one (unless it is
      // the API's no-op, which nothing would read; or the HTTP span, which is).
      const result = activeSpan && owned &&
          (span.isRecording() || trace.isSpanContextValid(span.spanContext()))
        ? await contexts.with(trace.setSpan(parent!, span), next)
        : await next();
      if (method === "initialize" && typeof result?.protocolVersion === "string") {
        attributes = { ...attributes, "mcp.protocol.version": result.protocolVersion };
        span.setAttribute("mcp.protocol.version", result.protocolVersion);
      }
      if (method === "tools/call" && result) {
        if (result.isError === true) {
          // A tool that failed because it was cancelled was cancelled.
          attributes = fail(span, attributes, context?.signal.aborted ? "cancelled" : "tool_error");
        } else if (options.recordToolResults && span.isRecording()) {
          const text = json(result);
          if (text !== undefined) span.setAttribute("gen_ai.tool.call.result", text);
        }
      }
      return result;
    } catch (error) {
      if (context?.signal.aborted) {
        attributes = fail(span, attributes, "cancelled"); // or its client went away: no answer is sent
      } else if (!(error instanceof NoReply)) { // NO_REPLY: the server answers by itself
        const mcpError = McpError.from(error);
        const code = String(mcpError.code);
        attributes = fail(span, attributes, code, code, mcpError.message);
      }
      throw error;
    } finally {
      if (owned) span.end();
      if (operationMetric) operations.record((performance.now() - started) / 1000, attributes);
    }
  };
  middleware.sessionEnded = (end: SessionEnd) => {
    const attributes: Attributes = { "mcp.protocol.version": end.protocolVersion };
    addNetwork(attributes, end.transport);
    sessions.record(end.durationMs / 1000, attributes);
  };
  return middleware;
}
