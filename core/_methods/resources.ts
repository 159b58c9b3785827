/**
 * `resources/list`, `resources/templates/list` and `resources/read`.
 *
 * @module
 */

import { ErrorCode, McpError } from "../errors.ts";
import { paginate } from "./pagination.ts";
import type { Route } from "./method_call.ts";
import { pick } from "../_objects.ts";
import { holdsScopes, InsufficientScopeError, visibleByScope } from "../reply.ts";
import type { ResourceReadReturn } from "../server.ts";
import { readSkillFile, servesSkills, skillResources } from "./skills.ts";
import type { ResourceContents } from "../types.ts";

const RESOURCE_KEYS = [
  "uri",
  "name",
  "title",
  "description",
  "mimeType",
  "size",
  "annotations",
  "icons",
  "_meta",
] as const;
const TEMPLATE_KEYS = [
  "uriTemplate",
  "name",
  "title",
  "description",
  "mimeType",
  "annotations",
  "icons",
  "_meta",
] as const;

// A cache of each (immutable) definition's wire form.
const wireCache = new WeakMap<object, Record<string, unknown>>();

function wire(item: object, keys: readonly string[]): Record<string, unknown> {
  let entry = wireCache.get(item);
  if (!entry) {
    entry = pick(item, keys);
    wireCache.set(item, entry);
  }
  return entry;
}

/** Serves `resources/list`: the fixed resources, then each skill's `SKILL.md`. */
export function listResources(route: Route): Promise<Record<string, unknown>> {
  if (servesSkills(route.server)) return listWithSkills(route);
  const page = paginate(
    visibleByScope([...route.server.resources.values()], route.frame),
    route.params.cursor as string | undefined,
    route.server.definition.pageSize,
  );
  const result: Record<string, unknown> = {
    resources: page.items.map((r) => wire(r, RESOURCE_KEYS)),
  };
  if (page.nextCursor) result.nextCursor = page.nextCursor;
  return Promise.resolve(result);
}

async function listWithSkills(route: Route): Promise<Record<string, unknown>> {
  const fixed = visibleByScope([...route.server.resources.values()], route.frame)
    .map((r) => wire(r, RESOURCE_KEYS));
  const skills = await skillResources(route.server, route.frame);
  const page = paginate(
    [...fixed, ...skills as object[] as Record<string, unknown>[]],
    route.params.cursor as string | undefined,
    route.server.definition.pageSize,
  );
  const result: Record<string, unknown> = { resources: page.items };
  if (page.nextCursor) result.nextCursor = page.nextCursor;
  return result;
}

/** Serves `resources/templates/list`. */
export function listResourceTemplates(route: Route): Promise<Record<string, unknown>> {
  const page = paginate(
    route.server.resourceTemplates,
    route.params.cursor as string | undefined,
    route.server.definition.pageSize,
  );
  const result: Record<string, unknown> = {
    resourceTemplates: page.items.map((t) => wire(t.definition, TEMPLATE_KEYS)),
  };
  if (page.nextCursor) result.nextCursor = page.nextCursor;
  return Promise.resolve(result);
}

/** Serves `resources/read`. */
export async function readResource(route: Route): Promise<Record<string, unknown>> {
  const { server, frame, dialect } = route;
  const uri = route.params.uri as string;
  const resource = server.resources.get(uri);
  const needed = resource?.requiredScopes;
  if (needed && needed.length > 0 && !holdsScopes(frame, needed)) {
    throw new InsufficientScopeError("resource", uri, needed);
  }
  let returned: ResourceReadReturn | undefined;
  let mimeType: string | undefined;
  if (resource?.read) {
    returned = await resource.read(uri, frame);
    mimeType = resource.mimeType;
  } else {
    for (const { definition, template } of server.resourceTemplates) {
      const variables = template.match(uri);
      if (!variables || !definition.read) continue;
      returned = await definition.read(uri, variables, frame);
      mimeType = definition.mimeType;
      break;
    }
  }
  if (returned === undefined && servesSkills(server)) {
    returned = await readSkillFile(server, uri, frame);
  }
  if (returned === undefined && server.definition.handleResourceRead) {
    returned = await server.definition.handleResourceRead(uri, frame);
  }
  if (returned === undefined) throw dialect.resourceNotFound(uri);
  const result = normalize(returned, uri, mimeType);
  // A read must never answer with nothing: an empty list means "not found".
  if ((result.contents as unknown[]).length === 0) throw dialect.resourceNotFound(uri);
  return result;
}

function normalize(
  returned: ResourceReadReturn,
  uri: string,
  mimeType: string | undefined,
): Record<string, unknown> {
  if (typeof returned === "string") {
    const contents: ResourceContents = mimeType
      ? { uri, mimeType, text: returned }
      : { uri, text: returned };
    return { contents: [contents] };
  }
  if (Array.isArray(returned)) return { contents: returned };
  if (typeof returned === "object" && returned !== null) {
    if (Array.isArray((returned as { contents?: unknown }).contents)) {
      return returned as Record<string, unknown>;
    }
    if ("text" in returned || "blob" in returned) return { contents: [returned] };
  }
  throw new McpError(ErrorCode.INTERNAL_ERROR, `Resource ${uri} returned no contents`);
}
