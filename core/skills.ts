/**
 * Skills (SEP-2640, the `io.modelcontextprotocol/skills` extension): Agent
 * Skills served as `skill://` resources, listed by `skills/list`, fetched by
 * `skills/get`, and browsed by `resources/directory/read`.
 *
 * A skill is a folder with a `SKILL.md` (YAML frontmatter with at least
 * `name` and `description`, then markdown) and any other files. Write one in
 * memory with {@link defineSkill}, or read a folder of them with
 * {@link skillsFromDirectory}, and give them to `defineServer({ skills })`;
 * `serverSkills` decides per caller which ones it sees.
 *
 * @module
 */

import { FrontmatterError, parseSkillMarkdown } from "./_frontmatter.ts";

/**
 * The extension identifier a server with skills declares under
 * `capabilities.extensions`.
 *
 * @example
 * ```ts
 * import { SKILLS_EXTENSION } from "@anubis/core";
 * import assert from "node:assert/strict";
 * assert.equal(SKILLS_EXTENSION, "io.modelcontextprotocol/skills");
 * ```
 */
export const SKILLS_EXTENSION = "io.modelcontextprotocol/skills";

/** Per-skill limits: hosts must accept skills up to these, servers should not exceed them. */
const MAX_FILES = 512;
const MAX_BYTES = 16 * 1024 * 1024;
const NAME = /^(?!.*--)[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$/;
const PATH_SEGMENT = /^[A-Za-z0-9._~-]+$/;

/**
 * One file of a skill.
 *
 * @example
 * ```ts
 * import { defineSkill, type SkillFile } from "@anubis/core";
 * import assert from "node:assert/strict";
 * const skill = defineSkill({ "SKILL.md": "---\nname: hi\ndescription: Says hi\n---\nSay hi.\n" });
 * const file: SkillFile = skill.files[0];
 * assert.equal(file.uri, "skill://hi/SKILL.md");
 * assert.equal(file.mimeType, "text/markdown");
 * ```
 */
export interface SkillFile {
  /** Its path under the skill's folder, `/`-separated (`SKILL.md`, `references/FORMS.md`). */
  readonly path: string;
  /** Its resource URI. */
  readonly uri: string;
  /** Its media type, from its extension. */
  readonly mimeType: string;
  /** Its raw bytes (what the digest covers). */
  readonly bytes: Uint8Array;
}

/**
 * A skill, ready to serve: made by {@link defineSkill} or
 * {@link skillsFromDirectory}.
 *
 * @example
 * ```ts
 * import { defineSkill, type SkillDefinition } from "@anubis/core";
 * import assert from "node:assert/strict";
 * const skill: SkillDefinition = defineSkill({
 *   "SKILL.md": "---\nname: hi\ndescription: Says hi\n---\nSay hi.\n",
 * });
 * assert.equal(skill.name, "hi");
 * assert.equal(skill.uri, "skill://hi/SKILL.md");
 * ```
 */
export interface SkillDefinition {
  /** The frontmatter `name`, which is also the last segment of {@link path}. */
  readonly name: string;
  /** The frontmatter `description`. */
  readonly description: string;
  /** The skill path: `name`, or segments ending in it (`acme/billing/refunds`). */
  readonly path: string;
  /** The URI of its `SKILL.md`: `skill://<path>/SKILL.md`. */
  readonly uri: string;
  /** The `SKILL.md` frontmatter as JSON, as a YAML parser reads it. */
  readonly frontmatter: Readonly<Record<string, unknown>>;
  /** Every file, `SKILL.md` first, then by path. */
  readonly files: readonly SkillFile[];
}

/**
 * Options of {@link defineSkill}.
 *
 * @example
 * ```ts
 * import type { DefineSkillOptions } from "@anubis/core";
 * const options: DefineSkillOptions = { path: "acme/refunds" };
 * if (options.path !== "acme/refunds") throw new Error("unexpected");
 * ```
 */
export interface DefineSkillOptions {
  /**
   * The skill path, whose last segment must be the skill's name (default: the
   * name). Its first segment is the URI's authority.
   */
  path?: string;
}

/**
 * Makes a skill from its files: `files` maps paths under the skill's folder
 * to their contents, and must hold a `SKILL.md` whose frontmatter has a
 * `name` (1-64 of `a-z 0-9 -`, no leading, trailing or double hyphen) and a
 * `description`. Throws a `TypeError` naming the problem for anything else:
 * no `SKILL.md`, frontmatter it cannot read (see the YAML subset in
 * `core/README.md`), a path that leaves the folder, more than 512 files or
 * 16 MiB.
 *
 * @param files The skill's files by path (`SKILL.md`, `references/GUIDE.md`).
 * @param options The skill path, when it is not just the name.
 * @returns The skill.
 *
 * @example
 * ```ts
 * import { defineSkill } from "@anubis/core";
 * import assert from "node:assert/strict";
 * const skill = defineSkill({
 *   "SKILL.md": "---\nname: pdf-forms\ndescription: Fill PDF forms\n---\n# Steps\n",
 *   "references/FIELDS.md": "# Fields\n",
 * });
 * assert.equal(skill.description, "Fill PDF forms");
 * assert.deepEqual(skill.files.map((f) => f.uri), [
 *   "skill://pdf-forms/SKILL.md",
 *   "skill://pdf-forms/references/FIELDS.md",
 * ]);
 * assert.throws(() => defineSkill({ "README.md": "" }), TypeError);
 * ```
 */
export function defineSkill(
  files: Readonly<Record<string, string | Uint8Array>>,
  options: DefineSkillOptions = {},
): SkillDefinition {
  const manifest = files["SKILL.md"];
  if (manifest === undefined) throw new TypeError("A skill needs a SKILL.md");
  const encoder = new TextEncoder();
  const manifestText = typeof manifest === "string"
    ? manifest
    : new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(manifest);
  let frontmatter: Record<string, unknown>;
  try {
    frontmatter = parseSkillMarkdown(manifestText).frontmatter;
  } catch (error) {
    if (!(error instanceof FrontmatterError)) throw error;
    throw new TypeError(`SKILL.md: ${error.message}`);
  }
  const { name, description } = frontmatter;
  if (typeof name !== "string" || !NAME.test(name)) {
    throw new TypeError(
      `SKILL.md: name ${JSON.stringify(name)} must be 1-64 of a-z, 0-9 and "-", ` +
        "with no leading, trailing or double hyphen",
    );
  }
  if (typeof description !== "string" || description === "") {
    throw new TypeError(`Skill ${name}: SKILL.md needs a non-empty description`);
  }
  const path = options.path ?? name;
  const segments = path.split("/");
  if (segments.at(-1) !== name || !segments.every((s) => PATH_SEGMENT.test(s) && s !== "..")) {
    throw new TypeError(`Skill ${name}: path ${JSON.stringify(path)} must end in its name`);
  }
  const base = `skill://${path}/`;
  const prepared: SkillFile[] = [];
  let total = 0;
  for (const [filePath, content] of Object.entries(files)) {
    const parts = filePath.split("/");
    if (parts.some((p) => p === "" || p === "." || p === "..")) {
      throw new TypeError(`Skill ${name}: file path ${JSON.stringify(filePath)} is not inside it`);
    }
    const bytes = typeof content === "string" ? encoder.encode(content) : content;
    total += bytes.byteLength;
    prepared.push({
      path: filePath,
      uri: base + parts.map(encodeURIComponent).join("/"),
      mimeType: mimeTypeOf(filePath),
      bytes,
    });
  }
  if (prepared.length > MAX_FILES || total > MAX_BYTES) {
    throw new TypeError(
      `Skill ${name}: ${prepared.length} files of ${total} bytes exceed the limits ` +
        `(${MAX_FILES} files, ${MAX_BYTES} bytes)`,
    );
  }
  prepared.sort((a, b) =>
    a.path === "SKILL.md" ? -1 : b.path === "SKILL.md" ? 1 : a.path < b.path ? -1 : 1
  );
  return Object.freeze({
    name,
    description,
    path,
    uri: `${base}SKILL.md`,
    frontmatter: Object.freeze(frontmatter),
    files: Object.freeze(prepared),
  });
}

/**
 * Reads every skill under `root`: each folder directly in it that holds a
 * `SKILL.md` is one skill, named by its frontmatter, with every file below
 * it. Folders without a `SKILL.md` are skipped; a symbolic link, or a skill
 * {@link defineSkill} refuses, rejects with an error naming the folder.
 * Runs on Deno (through `Deno.*`) and on Node 22.3 or later (through
 * `process.getBuiltinModule("node:fs/promises")`); nothing is imported statically.
 *
 * @param root The folder of skill folders (a path or a `file:` URL).
 * @returns The skills, sorted by name.
 *
 * @example
 * ```ts
 * import { skillsFromDirectory } from "@anubis/core";
 * import assert from "node:assert/strict";
 * const root = await Deno.makeTempDir();
 * await Deno.mkdir(`${root}/greet/references`, { recursive: true });
 * await Deno.writeTextFile(`${root}/greet/SKILL.md`, "---\nname: greet\ndescription: Greets\n---\nHi.\n");
 * await Deno.writeTextFile(`${root}/greet/references/TONE.md`, "Warm.\n");
 * const [skill] = await skillsFromDirectory(root);
 * assert.equal(skill.uri, "skill://greet/SKILL.md");
 * assert.equal(skill.files.length, 2);
 * await Deno.remove(root, { recursive: true });
 * ```
 */
export async function skillsFromDirectory(root: string | URL): Promise<SkillDefinition[]> {
  const fs = fileSystem();
  const base = fs.path(root);
  const skills: SkillDefinition[] = [];
  for (const entry of await fs.list(base)) {
    if (entry.kind !== "directory") continue;
    const folder = `${base}/${entry.name}`;
    const files: Record<string, Uint8Array> = {};
    let count = 0;
    const walk = async (dir: string, prefix: string): Promise<void> => {
      for (const child of await fs.list(dir)) {
        const path = prefix + child.name;
        if (child.kind === "directory") await walk(`${dir}/${child.name}`, `${path}/`);
        else if (child.kind === "file") {
          if (++count > MAX_FILES) {
            throw new TypeError(`Skill folder ${folder}: more than ${MAX_FILES} files`);
          }
          files[path] = await fs.read(`${dir}/${child.name}`);
        } else throw new TypeError(`Skill folder ${folder}: ${path} is not a regular file`);
      }
    };
    if (!await fs.exists(`${folder}/SKILL.md`)) continue;
    await walk(folder, "");
    try {
      skills.push(defineSkill(files));
    } catch (error) {
      throw new TypeError(`Skill folder ${folder}: ${(error as Error).message}`);
    }
  }
  return skills.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

/** What {@link skillsFromDirectory} reads a folder with. */
interface SkillFileSystem {
  /** A path, or a `file:` URL, as a path. */
  path(root: string | URL): string;
  list(dir: string): Promise<{ name: string; kind: "directory" | "file" | "other" }[]>;
  read(path: string): Promise<Uint8Array>;
  exists(path: string): Promise<boolean>;
}

/** The parts of `node:fs/promises` and `node:url` read here. */
interface NodeFs {
  readdir(path: string, options: { withFileTypes: true }): Promise<
    { name: string; isDirectory(): boolean; isFile(): boolean }[]
  >;
  readFile(path: string): Promise<Uint8Array>;
  access(path: string): Promise<void>;
}

/** Deno's own file system when on Deno, else Node's built-in modules (no static `node:` import). */
function fileSystem(): SkillFileSystem {
  const deno = (globalThis as { Deno?: typeof Deno }).Deno;
  if (deno?.readDir) {
    return {
      path: (root) => {
        if (typeof root === "string") return root;
        if (root.protocol !== "file:") throw new TypeError(`Not a file: URL: ${root.href}`);
        const path = decodeURIComponent(root.pathname);
        return deno.build.os === "windows" ? path.replace(/^\/(?=[A-Za-z]:)/, "") : path;
      },
      list: async (dir) => {
        const entries = [];
        for await (const entry of deno.readDir(dir)) {
          const kind = entry.isDirectory ? "directory" : entry.isFile ? "file" : "other";
          entries.push({ name: entry.name, kind } as const);
        }
        return entries;
      },
      read: (path) => deno.readFile(path),
      exists: (path) => deno.stat(path).then(() => true, () => false),
    };
  }
  const process = (globalThis as {
    process?: { getBuiltinModule?: (id: string) => unknown };
  }).process;
  if (!process?.getBuiltinModule) {
    throw new TypeError("skillsFromDirectory needs Deno, or Node 22.3 or later");
  }
  const fs = process.getBuiltinModule("node:fs/promises") as NodeFs;
  const url = process.getBuiltinModule("node:url") as { fileURLToPath(url: URL): string };
  return {
    path: (root) => typeof root === "string" ? root : url.fileURLToPath(root),
    list: async (dir) =>
      (await fs.readdir(dir, { withFileTypes: true })).map((entry) => ({
        name: entry.name,
        kind: entry.isDirectory() ? "directory" : entry.isFile() ? "file" : "other",
      })),
    read: async (path) => new Uint8Array(await fs.readFile(path)),
    exists: (path) => fs.access(path).then(() => true, () => false),
  };
}

const MIME_TYPES: Record<string, string> = {
  md: "text/markdown",
  txt: "text/plain",
  json: "application/json",
  yaml: "application/yaml",
  yml: "application/yaml",
  csv: "text/csv",
  html: "text/html",
  xml: "application/xml",
  js: "text/javascript",
  mjs: "text/javascript",
  ts: "text/x-typescript",
  py: "text/x-python",
  sh: "text/x-shellscript",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  svg: "image/svg+xml",
  pdf: "application/pdf",
};

function mimeTypeOf(path: string): string {
  const dot = path.lastIndexOf(".");
  const extension = dot > path.lastIndexOf("/") ? path.slice(dot + 1).toLowerCase() : "";
  return MIME_TYPES[extension] ?? "application/octet-stream";
}
