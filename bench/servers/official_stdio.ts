/**
 * The stdio peer: the official TypeScript SDK v2's `serveStdio` with the
 * same `echo` tool, written against its public API only.
 *
 * @module
 */

import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { createOfficialServer } from "./official_echo.ts";

serveStdio(createOfficialServer);
