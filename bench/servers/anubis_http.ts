/**
 * This SDK's bare Web handler (`createHttpHandler` of
 * `@anubis/transport-http`) in `Deno.serve`, without the CLI.
 * `--max-sessions=N` raises the live legacy session bound (default 10,000)
 * and the bound per client (default 1,000) for the session creation and
 * memory runs, which open more than that from one address, and with them the
 * bytes those sessions may retain (16 MiB per client by default: about
 * 55,000 of the benchmark's sessions).
 *
 * @module
 */

import { createHttpHandler } from "@anubis/transport-http";
import server from "./echo_server.ts";
import { serveBench } from "./listening.ts";

const maxSessions = Deno.args.find((arg) => arg.startsWith("--max-sessions="))?.split("=")[1];
const bound = maxSessions === undefined ? undefined : Number(maxSessions);
const bytes = bound === undefined ? undefined : Number.MAX_SAFE_INTEGER;
const handler = createHttpHandler(server, {
  maxSessions: bound,
  maxSessionsPerClient: bound,
  maxSessionBytesPerClient: bytes,
  maxSessionBytesTotal: bytes,
});

serveBench("anubis", handler);
