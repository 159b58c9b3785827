/**
 * This SDK on Node: transport-http's Web handler (`createHttpHandler`) on
 * `node:http` through `@hono/node-server`'s `getRequestListener`, serving
 * the same echo server as every other row (both eras on one endpoint).
 *
 * @module
 */

import { getRequestListener } from "@hono/node-server";
import { createHttpHandler } from "@anubis/transport-http";
import server from "../echo_server.ts";
import { listenBench } from "./listening.ts";

const handler = createHttpHandler(server);

listenBench("anubis-node", getRequestListener((request) => handler(request)));
