/**
 * One engine in process with the real dialects and a legacy session whose
 * messages are collected: the setup the engine tests share.
 */

import { defineServer, type ServerDefinition } from "@anubis/core";
import { Engine, type JsonRpcMessage, type Reply, type Session } from "@anubis/core/engine";
import { createDefaultRegistry } from "@anubis/dialects";

/** The `_meta` of a minimal stateless (2026-07-28) request. */
export const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
};

/** The engine, its session, and helpers that speak to it. */
export interface EngineHarness {
  engine: Engine;
  session: Session;
  exchange: { session: Session; transport: string; emit: (m: JsonRpcMessage) => void };
  /** What the session and its requests sent, in order. */
  emitted: JsonRpcMessage[];
  /** Sends a request with the next id; resolves to the engine's reply. */
  send(method: string, params?: Record<string, unknown>): Promise<Reply | undefined>;
  /** Sends a request with the next id; resolves to the reply's message. */
  // deno-lint-ignore no-explicit-any
  request(method: string, params?: Record<string, unknown>): Promise<any>;
  /** Initializes the session at a legacy version; resolves to the initialize answer. */
  // deno-lint-ignore no-explicit-any
  initialize(protocolVersion?: string): Promise<any>;
}

/** Builds a server from `definition` (name `t`, version `1.0.0` unless given) and opens a session. */
export function engineHarness(
  definition: Partial<ServerDefinition>,
  options: { sessionId?: string } = {},
): EngineHarness {
  const server = defineServer({ name: "t", version: "1.0.0", ...definition });
  const engine = new Engine(server, { registry: createDefaultRegistry() });
  const emitted: JsonRpcMessage[] = [];
  const session = engine.createSession({
    id: options.sessionId,
    transport: "test",
    onMessage: (m) => void emitted.push(m),
  });
  const exchange = {
    session,
    transport: "test",
    emit: (m: JsonRpcMessage) => void emitted.push(m),
  };
  let id = 0;
  const send = (method: string, params?: Record<string, unknown>) =>
    engine.handle({ jsonrpc: "2.0", id: ++id, method, params }, exchange);
  const request = async (method: string, params?: Record<string, unknown>) =>
    (await send(method, params))?.message;
  const initialize = async (protocolVersion = "2025-11-25") => {
    const reply = await request("initialize", {
      protocolVersion,
      capabilities: {},
      clientInfo: { name: "c", version: "1" },
    });
    await engine.handle({ jsonrpc: "2.0", method: "notifications/initialized" }, exchange);
    return reply;
  };
  return { engine, session, exchange, emitted, send, request, initialize };
}
