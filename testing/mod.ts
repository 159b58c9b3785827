/**
 * `@anubis/testing`: test a server of one's own in process, and check a store
 * against the contracts every store package runs.
 *
 * - {@link connect}: an in-process client over the engine path the real
 *   transports use (no sockets, no processes), for a legacy session or
 *   stateless requests; the registry defaults to `@anubis/dialects`' own.
 * - {@link eventStoreContract}, {@link sessionStoreContract} and
 *   {@link taskStoreContract}: the cases an `EventStore`, `SessionStore` or
 *   `TaskStore` must pass, returned as data for any test runner.
 *
 * @example
 * ```ts
 * import { defineServer } from "@anubis/core";
 * import { connect } from "@anubis/testing";
 * import assert from "node:assert/strict";
 *
 * const server = defineServer({
 *   name: "hello",
 *   version: "1.0.0",
 *   tools: [{ name: "greet", handler: () => "Hello!" }],
 * });
 * const client = await connect(server);
 * assert.deepEqual((await client.callTool("greet")).content, [{ type: "text", text: "Hello!" }]);
 * client.close();
 * ```
 *
 * @module
 */

export { connect, type ConnectOptions, type TestClient } from "./_client.ts";
export {
  type ContractCase,
  eventStoreContract,
  sessionStoreContract,
  type StoreFactory,
  type StoreFixture,
  taskStoreContract,
} from "./_contracts.ts";
