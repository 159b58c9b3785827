/**
 * The reserved `_meta` keys of MCP.
 *
 * @module
 */

/**
 * Reserved `_meta` keys. Stateless-era requests carry the protocol version,
 * client capabilities, client info and log level in `params._meta`; results
 * carry the server's identity; listen streams tag notifications with the
 * subscription id.
 *
 * @example
 * ```ts
 * import { MetaKey } from "@anubis/core/engine";
 * import assert from "node:assert/strict";
 * const meta = { [MetaKey.protocolVersion]: "2026-07-28", [MetaKey.clientCapabilities]: {} };
 * assert.equal(Object.keys(meta)[0], "io.modelcontextprotocol/protocolVersion");
 * ```
 */
export const MetaKey = {
  /** The protocol version of a stateless request. */
  protocolVersion: "io.modelcontextprotocol/protocolVersion",
  /** The client capabilities of a stateless request. */
  clientCapabilities: "io.modelcontextprotocol/clientCapabilities",
  /** The client's identity on a stateless request. */
  clientInfo: "io.modelcontextprotocol/clientInfo",
  /** The minimum log level a stateless request opts in to. */
  logLevel: "io.modelcontextprotocol/logLevel",
  /** The server's identity on a stateless result. */
  serverInfo: "io.modelcontextprotocol/serverInfo",
  /** The subscription a listen-stream message belongs to. */
  subscriptionId: "io.modelcontextprotocol/subscriptionId",
} as const;
