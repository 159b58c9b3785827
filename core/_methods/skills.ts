/**
 * Serving skills (SEP-2640): `skills/list`, `skills/get`,
 * `resources/directory/read`, and the skill files as resources. Nothing here
 * runs for a server without skills: the routes answer `-32601`, and the
 * resource methods reach this module only when the server has skills.
 *
 * @module
 */

import { ErrorCode, McpError } from "../errors.ts";
import type { Frame } from "../frame.ts";
import { paginate } from "./pagination.ts";
import type { Route } from "./method_call.ts";
import type { McpServer } from "../server.ts";
import type { SkillDefinition, SkillFile } from "../skills.ts";
import type { Resource, ResourceContents } from "../types.ts";

const DIRECTORY = "inode/directory";

/** One file of a skill entry. */
interface EntryFile {
  uri: string;
  digest: string;
  size: number;
}

/** What serving a skill needs, built once per skill on first use. */
interface Index {
  /** The wire entry (digests take a promise to compute). */
  entry: Promise<{ uri: string; frontmatter: Record<string, unknown>; resources: EntryFile[] }>;
  /** Files by URI. */
  files: Map<string, SkillFile>;
  /** Directories by URI (`skill://<path>` and its sub-folders), with their children. */
  directories: Map<string, Record<string, unknown>[]>;
}

const indexes = new WeakMap<SkillDefinition, Index>();

function indexOf(skill: SkillDefinition): Index {
  let index = indexes.get(skill);
  if (index) return index;
  const files = new Map<string, SkillFile>();
  const directories = new Map<string, Record<string, unknown>[]>();
  const root = skill.uri.slice(0, -"/SKILL.md".length);
  directories.set(root, []);
  for (const file of skill.files) {
    files.set(file.uri, file);
    // Each folder on the way is a child of its parent, once.
    let parent = root;
    const parts = file.uri.slice(root.length + 1).split("/");
    for (let i = 0; i < parts.length - 1; i++) {
      const folder = `${parent}/${parts[i]}`;
      if (!directories.has(folder)) {
        directories.set(folder, []);
        directories.get(parent)!.push({
          uri: folder,
          name: decodeURIComponent(parts[i]),
          mimeType: DIRECTORY,
        });
      }
      parent = folder;
    }
    directories.get(parent)!.push({
      uri: file.uri,
      name: decodeURIComponent(parts[parts.length - 1]),
      mimeType: file.mimeType,
      size: file.bytes.byteLength,
    });
  }
  for (const children of directories.values()) {
    children.sort((a, b) => (a.uri as string) < (b.uri as string) ? -1 : 1);
  }
  const entry = Promise.all(skill.files.map(async (file) => ({
    uri: file.uri,
    digest: await sha256(file.bytes),
    size: file.bytes.byteLength,
  }))).then((resources) => ({
    uri: skill.uri,
    frontmatter: skill.frontmatter as Record<string, unknown>,
    resources,
  }));
  index = { entry, files, directories };
  indexes.set(skill, index);
  return index;
}

async function sha256(bytes: Uint8Array): Promise<string> {
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as BufferSource));
  let hex = "sha256:";
  for (const byte of hash) hex += byte.toString(16).padStart(2, "0");
  return hex;
}

/** Whether the server serves skills (decided once, by `defineServer`). */
export function servesSkills(server: McpServer): boolean {
  return server.skills.size > 0 || server.definition.serverSkills !== undefined;
}

/** The skills this frame's caller sees. */
export async function visibleSkills(
  server: McpServer,
  frame: Frame,
): Promise<readonly SkillDefinition[]> {
  const declared = [...server.skills.values()];
  const choose = server.definition.serverSkills;
  return choose ? await choose(declared, frame) : declared;
}

function notFound(method: string): McpError {
  return new McpError(ErrorCode.METHOD_NOT_FOUND, `Method not found: ${method}`);
}

/** Serves `skills/list`. */
export async function listSkills(route: Route): Promise<Record<string, unknown>> {
  const { server, frame, params } = route;
  if (!servesSkills(server)) throw notFound("skills/list");
  const page = paginate(
    await visibleSkills(server, frame),
    params.cursor as string | undefined,
    server.definition.pageSize,
  );
  const result: Record<string, unknown> = {
    skills: await Promise.all(page.items.map((skill) => indexOf(skill).entry)),
  };
  if (page.nextCursor) result.nextCursor = page.nextCursor;
  return result;
}

/** Serves `skills/get`: the entry of one skill the caller sees, by its `SKILL.md` URI. */
export async function getSkill(route: Route): Promise<Record<string, unknown>> {
  const { server, frame, params } = route;
  if (!servesSkills(server)) throw notFound("skills/get");
  const uri = params.uri as string;
  const skill = (await visibleSkills(server, frame)).find((s) => s.uri === uri);
  if (!skill) throw new McpError(ErrorCode.INVALID_PARAMS, `No skill is served at ${uri}`, { uri });
  return { skill: await indexOf(skill).entry };
}

/** Serves `resources/directory/read`: the direct children of a folder of a skill. */
export async function readSkillDirectory(route: Route): Promise<Record<string, unknown>> {
  const { server, frame, params } = route;
  const method = "resources/directory/read";
  if (!servesSkills(server) || server.definition.skillsDirectoryRead === false) {
    throw notFound(method);
  }
  const uri = params.uri as string;
  for (const skill of await visibleSkills(server, frame)) {
    const children = indexOf(skill).directories.get(uri);
    if (!children) continue;
    const page = paginate(
      children,
      params.cursor as string | undefined,
      server.definition.pageSize,
    );
    const result: Record<string, unknown> = { resources: page.items };
    if (page.nextCursor) result.nextCursor = page.nextCursor;
    return result;
  }
  throw new McpError(ErrorCode.INVALID_PARAMS, `${uri} is not a directory resource`, { uri });
}

/**
 * The resources `resources/list` adds for the caller's skills: each
 * `SKILL.md`, named and described by its frontmatter.
 */
export async function skillResources(server: McpServer, frame: Frame): Promise<Resource[]> {
  return (await visibleSkills(server, frame)).map((skill) => ({
    uri: skill.uri,
    name: skill.name,
    description: skill.description,
    mimeType: "text/markdown",
    size: skill.files[0].bytes.byteLength,
  }));
}

/** Reads a file of a skill the caller sees, or `undefined` when `uri` names none. */
export async function readSkillFile(
  server: McpServer,
  uri: string,
  frame: Frame,
): Promise<ResourceContents | undefined> {
  if (!uri.startsWith("skill://")) return undefined;
  for (const skill of await visibleSkills(server, frame)) {
    const file = indexOf(skill).files.get(uri);
    if (!file) continue;
    const { mimeType, bytes } = file;
    try {
      // Text when it is UTF-8, its BOM kept: the text's bytes are the digest's.
      const text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
      return { uri, mimeType, text };
    } catch {
      let binary = "";
      for (let i = 0; i < bytes.length; i += 0x8000) {
        binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
      }
      return { uri, mimeType, blob: btoa(binary) };
    }
  }
  return undefined;
}
