/**
 * The default routing table: which handler serves each client method, and
 * which server capability it needs.
 *
 * @module
 */

import { complete } from "./completion.ts";
import { getPrompt, listPrompts } from "./prompts.ts";
import { listResources, listResourceTemplates, readResource } from "./resources.ts";
import type { RouteHandler } from "./method_call.ts";
import { getSkill, listSkills, readSkillDirectory } from "./skills.ts";
import { callTool, listTools } from "./tools.ts";
import type { ServerCapabilities } from "../types.ts";

/** Handlers of the component methods. */
export const DEFAULT_ROUTES: Readonly<Record<string, RouteHandler>> = {
  "tools/list": listTools,
  "tools/call": callTool,
  "prompts/list": listPrompts,
  "prompts/get": getPrompt,
  "resources/list": listResources,
  "resources/templates/list": listResourceTemplates,
  "resources/read": readResource,
  "completion/complete": complete,
  // The skills extension (SEP-2640): `-32601` on a server without skills.
  "skills/list": listSkills,
  "skills/get": getSkill,
  "resources/directory/read": readSkillDirectory,
};

/** A method whose capability the server did not declare is answered `-32601`. */
export const REQUIRED_CAPABILITY: Readonly<Record<string, keyof ServerCapabilities>> = {
  "tools/list": "tools",
  "tools/call": "tools",
  "prompts/list": "prompts",
  "prompts/get": "prompts",
  "resources/list": "resources",
  "resources/templates/list": "resources",
  "resources/read": "resources",
  "resources/subscribe": "resources",
  "resources/unsubscribe": "resources",
  "resources/directory/read": "resources",
  "skills/list": "resources",
  "skills/get": "resources",
  "completion/complete": "completions",
  "logging/setLevel": "logging",
};
