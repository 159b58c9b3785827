/**
 * Dispatch of one request to its handler: the server's `handleRequest`
 * wrapper when defined, then the default routing (the admission checks of
 * {@link admit}, the built-in methods and the component routes).
 *
 * @module
 */

import { andThen } from "../awaitable.ts";
import type { Dialect } from "../dialect.ts";
import { ErrorCode, McpError } from "../errors.ts";
import type { Frame } from "../frame.ts";
import type { JsonRpcRequest } from "../json_rpc.ts";
import { DEFAULT_ROUTES, REQUIRED_CAPABILITY } from "./method_table.ts";
import * as s from "../schema.ts";
import type { Awaitable } from "../awaitable.ts";
import { NoReply } from "../reply.ts";
import { type McpServer, NO_REPLY } from "../server.ts";
import type { Session } from "../legacy/session.ts";
import type { LogLevel } from "../types.ts";

/** What dispatch needs of the engine: the server and the versions `server/discover` names. */
export interface DispatchTarget {
  /** The server served. */
  readonly server: McpServer;
  /** The versions served, newest first. */
  supportedVersions(): string[];
}

const UNWRAPPED = new Set(["initialize", "ping", "server/discover", "subscriptions/listen"]);

// A cache of each (immutable) dialect's request methods as a set.
const methodSets = new WeakMap<Dialect, Set<string>>();
function methodSet(dialect: Dialect): Set<string> {
  let set = methodSets.get(dialect);
  if (!set) methodSets.set(dialect, set = new Set(dialect.requestMethods));
  return set;
}

/**
 * What routes a request besides the request itself (the engine's record of
 * the call is one, so none is made per request).
 */
export interface Routing {
  /** The request's dialect. */
  readonly dialect: Dialect;
  /** The frame its handler receives. */
  readonly frame: Frame;
  /** The legacy session (`logging/setLevel`, `resources/subscribe`); none in the stateless era. */
  readonly session: Session | undefined;
  /**
   * The `_meta` schema the request's envelope was already validated with
   * (stateless era), so the params check skips it.
   */
  readonly checkedMeta: s.Schema | null | undefined;
}

/**
 * Runs a request through `handleRequest` (when defined) and the default
 * routing.
 * The result is the handler's own: a value when it answered at once, else a
 * promise; a refusal may throw at once.
 */
export function dispatch(
  target: DispatchTarget,
  request: JsonRpcRequest,
  routing: Routing,
): Awaitable<Record<string, unknown>> {
  const { method } = request;
  const known = methodSet(routing.dialect).has(method);
  const handleRequest = target.server.definition.handleRequest;
  if (!known && !handleRequest) throw notFound(method);
  if (!handleRequest || UNWRAPPED.has(method)) return route(target, request, routing, known);
  // The middleware gets a promise whatever the route does: a refusal rejects it.
  const next = async () => await route(target, request, routing, known);
  return Promise.resolve(handleRequest(request, routing.frame, next)).then((result) => {
    if (result === NO_REPLY) throw new NoReply();
    return result;
  });
}

/**
 * The checks every request after `initialize` passes before it is served,
 * whatever serves it (the default routing, or the engine itself for
 * `subscriptions/listen`): the dialect has the method (else `-32601`), the
 * server declared the capability it needs (else `-32601`), and the params fit
 * the dialect's schema (else `-32602`). `checkedMeta` as for {@link dispatch};
 * `known` is whether the dialect has the method, when the caller looked it up.
 *
 * @returns The params, as validated.
 */
export function admit(
  target: DispatchTarget,
  request: JsonRpcRequest,
  dialect: Dialect,
  checkedMeta?: s.Schema | null,
  known: boolean = methodSet(dialect).has(request.method),
): Record<string, unknown> {
  const { method } = request;
  if (!known) throw notFound(method);
  const capability = REQUIRED_CAPABILITY[method];
  if (capability && !target.server.capabilities[capability]) throw notFound(method);
  const params = request.params ?? {};
  const schema = paramsSchema(dialect, method, checkedMeta);
  const issues = schema && s.issuesOf(schema, params);
  if (issues) {
    throw new McpError(ErrorCode.INVALID_PARAMS, `Invalid params: ${s.formatIssues(issues)}`);
  }
  return params;
}

function route(
  target: DispatchTarget,
  request: JsonRpcRequest,
  routing: Routing,
  known: boolean,
): Awaitable<Record<string, unknown>> {
  const { method } = request;
  const { dialect, frame, session } = routing;
  const params = admit(target, request, dialect, routing.checkedMeta, known);
  const server = target.server;
  const caps = server.capabilities;
  switch (method) {
    case "ping":
      return {};
    case "server/discover": {
      const result: Record<string, unknown> = {
        supportedVersions: target.supportedVersions(),
        capabilities: dialect.serverCapabilities(caps),
      };
      return andThen(instructions(server, frame), (text) => {
        if (text !== undefined) result.instructions = text;
        return result;
      });
    }
    case "logging/setLevel":
      session!.setLogLevel(params.level as LogLevel);
      return {};
    case "resources/subscribe":
    case "resources/unsubscribe":
      if (!caps.resources?.subscribe) throw notFound(method);
      if (method === "resources/subscribe") session!.subscribe(params.uri as string);
      else session!.unsubscribe(params.uri as string);
      return {};
  }
  const handler = DEFAULT_ROUTES[method];
  if (!handler) throw notFound(method);
  return handler({ server, dialect, frame, request, params });
}

// A cache of each (immutable) params schema with its `_meta` reduced.
const withoutMeta = new WeakMap<s.Schema, s.Schema>();

// The params schema, with a `_meta` the envelope check already covered
// reduced to a presence check (it is validated once per request, not twice).
function paramsSchema(
  dialect: Dialect,
  method: string,
  checkedMeta: s.Schema | null | undefined,
): s.Schema | undefined {
  const schema = dialect.requestParamsSchema(method);
  if (!schema || !checkedMeta || schema.kind !== "object") return schema;
  const object = schema as s.ObjectSchema<s.Shape>;
  if (object.shape._meta !== checkedMeta) return schema;
  let reduced = withoutMeta.get(schema);
  if (!reduced) withoutMeta.set(schema, reduced = s.extend(object, { _meta: s.unknown() }));
  return reduced;
}

/** The server's instructions for this frame, if any. */
export async function instructions(server: McpServer, frame: Frame): Promise<string | undefined> {
  const defined = server.definition.instructions;
  return typeof defined === "function" ? await defined(frame) : defined;
}

function notFound(method: string): McpError {
  return new McpError(ErrorCode.METHOD_NOT_FOUND, `Method not found: ${method}`);
}
