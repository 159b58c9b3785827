/**
 * What the engine hands each method handler.
 *
 * @module
 */

import type { Dialect } from "../dialect.ts";
import type { Frame } from "../frame.ts";
import type { JsonRpcRequest } from "../json_rpc.ts";
import type { Awaitable } from "../awaitable.ts";
import type { McpServer } from "../server.ts";

/** The inputs of one routed request; internal to the engine. */
export interface Route {
  server: McpServer;
  dialect: Dialect;
  frame: Frame;
  request: JsonRpcRequest;
  params: Record<string, unknown>;
}

/** A method handler; internal to the engine. */
export type RouteHandler = (route: Route) => Awaitable<Record<string, unknown>>;
