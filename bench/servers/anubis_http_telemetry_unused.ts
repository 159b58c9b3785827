/**
 * The bare handler of `anubis_http.ts` in a program that imports
 * `@anubis/telemetry` and does not use it: with telemetry off, importing the
 * package must cost nothing per request.
 *
 * @module
 */

import { telemetry } from "@anubis/telemetry";
import { createHttpHandler } from "@anubis/transport-http";
import server from "./echo_server.ts";
import { serveBench } from "./listening.ts";

if (typeof telemetry !== "function") throw new Error("@anubis/telemetry did not load");
serveBench("anubis-telemetry-unused", createHttpHandler(server));
