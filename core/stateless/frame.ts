/**
 * Builds the frame of a stateless-era request: the facts its `_meta` carries,
 * its own assigns, and multi round-trip input.
 *
 * @module
 */

import type { Cancellation } from "../cancellation.ts";
import type { Dialect } from "../dialect.ts";
import type { Exchange } from "../exchange.ts";
import {
  EngineFrameContext,
  Frame,
  type FrameScope,
  type InputCollector,
  RequestAssigns,
} from "../frame.ts";
import type { JsonRpcMessage, JsonRpcRequest } from "../json_rpc.ts";
import { MetaKey } from "../meta.ts";
import type { McpServer } from "../server.ts";
import type { ClientCapabilities, Implementation } from "../types.ts";

/**
 * What a frame of the tasks extension adds: the task's way to ask the client
 * (a task's frame), or the start of a task (a request's frame).
 */
export type TaskHooks = Pick<FrameScope, "request" | "startTask">;

/** The frame of one stateless request, whose `_meta` the engine validated. */
export function statelessFrame(
  server: McpServer,
  dialect: Dialect,
  request: JsonRpcRequest,
  exchange: Exchange,
  emit: (message: JsonRpcMessage) => Promise<void>,
  cancellation: Cancellation,
  inputs: InputCollector | undefined,
  task?: TaskHooks,
): Frame {
  const meta = request.params!._meta as Record<string, unknown>;
  const context = new EngineFrameContext(
    "stateless",
    dialect.version,
    undefined,
    (meta[MetaKey.clientInfo] ?? {}) as Partial<Implementation>,
    meta[MetaKey.clientCapabilities] as ClientCapabilities,
    true,
    request.method,
    request.id,
    meta,
    exchange,
    cancellation,
  );
  return new Frame({
    context,
    dialect,
    notify: server.notify,
    assigns: new RequestAssigns(exchange.assigns),
    emit,
    canLog: server.capabilities.logging !== undefined,
    inputs,
    request: task?.request,
    startTask: task?.startTask,
  });
}
