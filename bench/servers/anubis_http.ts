/**
 * This SDK's bare Web handler (`createHttpHandler` of
 * `@anubis/transport-http`) in `Deno.serve`, without the CLI.
 * `--max-sessions=N` raises the live legacy session bound (default 10,000)
 * and the bound per client (default 1,000) for the session creation and
 * memory runs, which open more than that from one address.
 *
 * @module
 */

import { createHttpHandler } from "@anubis/transport-http";
import server from "./echo_server.ts";
import { serveBench } from "./listening.ts";

const maxSessions = Deno.args.find((arg) => arg.startsWith("--max-sessions="))?.split("=")[1];
const bound = maxSessions === undefined ? undefined : Number(maxSessions);
const handler = createHttpHandler(server, { maxSessions: bound, maxSessionsPerClient: bound });

serveBench("anubis", handler);
