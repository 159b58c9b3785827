/**
 * `prompts/list` and `prompts/get`.
 *
 * @module
 */

import { ErrorCode, McpError } from "../errors.ts";
import { paginate } from "./pagination.ts";
import type { Route } from "./method_call.ts";
import { pick } from "../_objects.ts";
import { holdsScopes, InsufficientScopeError, visibleByScope } from "../reply.ts";
import type { PromptDefinition } from "../server.ts";
import type { GetPromptResult, PromptMessage } from "../types.ts";

// A cache of each (immutable) definition's wire form.
const wireCache = new WeakMap<PromptDefinition, Record<string, unknown>>();

function wire(prompt: PromptDefinition): Record<string, unknown> {
  let entry = wireCache.get(prompt);
  if (!entry) {
    entry = pick(prompt, ["name", "title", "description", "icons", "_meta"]);
    if (prompt.arguments) {
      entry.arguments = prompt.arguments.map((a) =>
        pick(a, ["name", "title", "description", "required"])
      );
    }
    wireCache.set(prompt, entry);
  }
  return entry;
}

/** Serves `prompts/list`. */
export function listPrompts(route: Route): Promise<Record<string, unknown>> {
  const page = paginate(
    visibleByScope([...route.server.prompts.values()], route.frame),
    route.params.cursor as string | undefined,
    route.server.definition.pageSize,
  );
  const result: Record<string, unknown> = { prompts: page.items.map(wire) };
  if (page.nextCursor) result.nextCursor = page.nextCursor;
  return Promise.resolve(result);
}

/** Serves `prompts/get`. */
export async function getPrompt(route: Route): Promise<Record<string, unknown>> {
  const { server, frame, params } = route;
  const name = params.name as string;
  const args = (params.arguments ?? {}) as Record<string, string>;
  const prompt = server.prompts.get(name);
  if (!prompt && !server.definition.handlePromptGet) {
    throw new McpError(ErrorCode.INVALID_PARAMS, `Unknown prompt: ${name}`, { name });
  }
  const needed = prompt?.requiredScopes;
  if (needed && needed.length > 0 && !holdsScopes(frame, needed)) {
    throw new InsufficientScopeError("prompt", name, needed);
  }
  const missing = prompt?.arguments?.filter((a) => a.required && typeof args[a.name] !== "string");
  if (missing?.length) {
    throw new McpError(
      ErrorCode.INVALID_PARAMS,
      `Missing required arguments for prompt ${name}: ${missing.map((a) => a.name).join(", ")}`,
    );
  }
  const returned = prompt?.handler
    ? await prompt.handler(args, frame)
    : await server.definition.handlePromptGet!(name, args, frame);
  return normalize(returned, prompt);
}

function normalize(
  returned: GetPromptResult | PromptMessage[],
  prompt: PromptDefinition | undefined,
): Record<string, unknown> {
  if (Array.isArray(returned)) {
    return prompt?.description
      ? { description: prompt.description, messages: returned }
      : { messages: returned };
  }
  if (typeof returned !== "object" || returned === null || !Array.isArray(returned.messages)) {
    throw new McpError(ErrorCode.INTERNAL_ERROR, "Prompt returned no messages array");
  }
  return returned;
}
