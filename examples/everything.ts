/**
 * The conformance "everything server": every tool, resource, template and
 * prompt the official MCP conformance suite (`@modelcontextprotocol/conformance`)
 * looks for, with the names, schemas and outputs it expects, for every
 * protocol version (2025-03-26, 2025-06-18, 2025-11-25 and 2026-07-28).
 *
 * ```sh
 * deno run -A cli/main.ts serve examples/everything.ts          # stdio
 * deno run -A cli/main.ts serve examples/everything.ts --http   # Streamable HTTP
 * ```
 *
 * It is also a tour of the API: plain data for components, handlers that
 * return strings or results, `frame.progress()` / `frame.log()`, input from
 * the client with `frame.elicit()` / `frame.sample()` / `frame.listRoots()`
 * (one handler for both eras), change notifications with `frame.notify`,
 * tools that run as tasks, skills (SEP-2640), and caching hints for the
 * stateless era.
 *
 * @module
 */

import { defineServer } from "@anubis/core";
import { contentTools } from "./everything/content_tools.ts";
import { diagnosticTools } from "./everything/diagnostic_tools.ts";
import { interactiveTools } from "./everything/interactive_tools.ts";
import { prompts } from "./everything/prompts.ts";
import { resources, resourceTemplates, resourceTools } from "./everything/resources.ts";
import { skills } from "./everything/skills.ts";
import { taskTools } from "./everything/task_tools.ts";

/**
 * Elicitation forms of 2025-11-25 (defaults, SEP-1034; titled and
 * multi-select enums, SEP-1330): sessions of older versions do not see them.
 */
const SINCE_2025_11_25 = new Set([
  "test_elicitation_sep1034_defaults",
  "test_elicitation_sep1330_enums",
]);

export default defineServer({
  name: "anubis-everything",
  version: "1.0.0",
  title: "Anubis everything server",
  instructions: "The MCP conformance everything server: every tool, resource and prompt " +
    "the conformance suite exercises.",
  // The task fixtures make the server declare tasks (2025-11-25) and the tasks
  // extension (2026-07-28).
  tools: [
    ...contentTools,
    ...interactiveTools,
    ...diagnosticTools,
    ...resourceTools,
    ...taskTools,
  ],
  // What a client may list and call can depend on the frame: here, on the
  // protocol version (versions are dates, so they compare as strings).
  serverTools: (tools, frame) =>
    frame.context.protocolVersion >= "2025-11-25"
      ? tools
      : tools.filter((tool) => !SINCE_2025_11_25.has(tool.name)),
  resources,
  resourceTemplates,
  prompts,
  // Skills (SEP-2640): the server declares the skills extension (2026-07-28),
  // serves skills/list, skills/get and resources/directory/read, and lists
  // each SKILL.md among its resources.
  skills,
  // Multi round-trip state is HMAC-signed with a random per-process key;
  // instances that share retries (behind one load balancer) share a secret.
  requestState: { secret: Deno.env.get("EVERYTHING_REQUEST_STATE_SECRET") },
  // Capabilities follow from the components (tools, prompts, resources with
  // subscriptions and list changes, completions, logging); nothing to declare.

  // Stateless clients may cache cacheable results. The lists are the same
  // for every client; the watched resource changes, so reads are not cached.
  cacheHints: (method) =>
    method === "resources/read"
      ? { ttlMs: 0, scope: "private" }
      : { ttlMs: 60_000, scope: "public" },
});
