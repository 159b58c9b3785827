/**
 * How a legacy session gets its dialect: the `initialize` handshake, and the
 * restoring of a stored session (`handleSessionExpired`, or `init` as on a
 * handshake).
 *
 * @module
 */

import { Cancellation } from "../cancellation.ts";
import type { Dialect } from "../dialect.ts";
import { ErrorCode, McpError } from "../errors.ts";
import type { Exchange } from "../exchange.ts";
import type { Reply } from "../reply.ts";
import type { JsonRpcRequest } from "../json_rpc.ts";
import { resultResponse } from "../json_rpc.ts";
import { type DispatchTarget, instructions } from "../_methods/dispatch.ts";
import { adoptAssigns, legacyFrame } from "./_frame.ts";
import { encodeContext, errorReply } from "../reply.ts";
import type { Registry } from "../registry.ts";
import * as s from "../schema.ts";
import type { McpServer } from "../server.ts";
import type { Session } from "./session.ts";
import type { SessionRecord } from "../session_store.ts";
import type { ClientCapabilities, Implementation } from "../types.ts";

/** Never cancelled: for frames outside a cancellable request. */
export const NEVER: Cancellation = new Cancellation();

// The newest legacy version's `initialize` params schema: the schema of an
// `initialize` that no served version answers. Looked up on that refusal
// path only, so nothing keeps it.
function newestInitializeSchema(registry: Registry): s.Schema | undefined {
  return registry.get(registry.versions("legacy")[0])?.requestParamsSchema("initialize");
}

/** How deep the client's capabilities and info may nest (the session copies them). */
const MAX_DEPTH = 64;

/** Whether a JSON value nests deeper than {@link MAX_DEPTH}, found without recursion. */
function tooDeep(value: unknown): boolean {
  if (value === null || typeof value !== "object") return false;
  // The stack is made only for a value with a nested object (most are flat).
  let stack: [unknown, number][] | undefined;
  let item: unknown = value, depth = 1;
  for (;;) {
    if (depth > MAX_DEPTH) return true;
    for (const key in item as Record<string, unknown>) {
      const child = (item as Record<string, unknown>)[key];
      if (child !== null && typeof child === "object") (stack ??= []).push([child, depth + 1]);
    }
    const next = stack?.pop();
    if (next === undefined) return false;
    [item, depth] = next;
  }
}

/** What the handshake needs of the engine: the server, its versions and the registry. */
export interface HandshakeTarget extends DispatchTarget {
  /** The versions known. */
  readonly registry: Registry;
}

/** Serves `initialize` on the exchange's session. */
export async function initialize(
  engine: HandshakeTarget,
  request: JsonRpcRequest,
  exchange: Exchange,
): Promise<Reply> {
  const session = exchange.session;
  if (!session) {
    return errorReply(
      request,
      new McpError(ErrorCode.INVALID_REQUEST, "No session to initialize"),
    );
  }
  if (session.dialect) {
    return errorReply(
      request,
      new McpError(ErrorCode.INVALID_REQUEST, "Session already initialized"),
    );
  }
  const { registry, server } = engine;
  const params = request.params ?? {};
  const dialect = registry.negotiate(params.protocolVersion, engine.supportedVersions());
  // Judged by the version that answers it (the requested one, or the one it falls back to).
  const schema = dialect
    ? dialect.requestParamsSchema("initialize")
    : newestInitializeSchema(registry);
  const checked = schema ? s.validate(schema, params) : { ok: true as const };
  if (!checked.ok) {
    return errorReply(
      request,
      new McpError(
        ErrorCode.INVALID_PARAMS,
        `Invalid initialize params: ${s.formatIssues(checked.issues)}`,
      ),
    );
  }
  const deep = tooDeep(params.capabilities)
    ? "capabilities"
    : tooDeep(params.clientInfo)
    ? "clientInfo"
    : undefined;
  if (deep) {
    return errorReply(
      request,
      new McpError(
        ErrorCode.INVALID_PARAMS,
        `Invalid initialize params: ${deep} nests deeper than ${MAX_DEPTH} levels`,
      ),
    );
  }
  if (!dialect) {
    return errorReply(
      request,
      new McpError(ErrorCode.INVALID_PARAMS, "Unsupported protocol version", {
        supported: engine.supportedVersions(),
        requested: params.protocolVersion,
      }),
    );
  }
  session.completeHandshake(
    dialect,
    (params.clientInfo ?? {}) as Implementation,
    (params.capabilities ?? {}) as ClientCapabilities,
  );
  const definition = server.definition;
  try {
    let text = definition.instructions;
    if (definition.init || typeof text === "function") {
      const frame = legacyFrame(server, {
        session,
        exchange,
        request,
        cancellation: NEVER,
      });
      await definition.init?.(session.clientInfo as Implementation, frame);
      if (typeof text === "function") text = await instructions(server, frame);
    } else {
      // No hook that gets a frame (most servers): build none, but the
      // request's assigns still join the session's, as a frame's would.
      adoptAssigns(session, exchange);
    }
    const result: Record<string, unknown> = {
      protocolVersion: dialect.version,
      capabilities: dialect.serverCapabilities(server.capabilities),
      serverInfo: server.info,
    };
    if (text !== undefined) result.instructions = text;
    return {
      message: resultResponse(
        request.id,
        dialect.encodeResult("initialize", result, encodeContext(server)),
      ),
      status: 200,
    };
  } catch (error) {
    // A rejected handshake leaves the session uninitialized; the transport drops it.
    session.failHandshake();
    return errorReply(request, error);
  }
}

/**
 * Restores a stored session into `session` (made by the engine, which drops
 * it if this rejects): its state from the record, then `handleSessionExpired`
 * decides (and may supply the client info), or `init` runs as on a handshake.
 */
export async function restore(
  server: McpServer,
  session: Session,
  dialect: Dialect,
  record: SessionRecord,
  exchange: Exchange,
): Promise<void> {
  session.restore(dialect, record);
  const frame = legacyFrame(server, {
    session,
    exchange,
    method: "session/restore",
    request: undefined,
    cancellation: NEVER,
  });
  const expired = server.definition.handleSessionExpired;
  if (expired) {
    const accepted = await expired(record.id, frame);
    if (accepted?.clientInfo) session.identify(accepted.clientInfo);
  } else {
    await server.definition.init?.(session.clientInfo as Implementation, frame);
  }
}
