/**
 * A small notes server: add, search and (for owners) delete notes, read
 * them as resources, and a prompt that summarizes them.
 *
 * ```sh
 * deno run -A cli/main.ts serve examples/notes.ts          # stdio: you are the owner
 * deno run -A cli/main.ts serve examples/notes.ts --http   # HTTP: readers unless a middleware says otherwise
 * ```
 *
 * What it shows:
 * - `init` deciding the caller's role and keeping it in `frame.assigns`
 *   (HTTP middleware may attach `role` to the request's assigns instead);
 * - `serverTools` hiding `delete_note` from everyone but owners, both in
 *   `tools/list` and for `tools/call`;
 * - `instructions` computed from the frame;
 * - handlers typed by their schemas with no annotation: JSON Schema
 *   literals, and a zod schema (`recent_notes`) whose defaults the engine
 *   applies before the handler runs;
 * - a tool result with a resource link and `structuredContent` checked
 *   against its `outputSchema`;
 * - `cacheHints` for stateless clients: what may be cached, for how long,
 *   and whether it is the same for everyone;
 * - a resource template with completion, a fixed index resource with update
 *   notifications, and a prompt embedding notes as resources.
 *
 * @module
 */

import { defineServer, defineTool, ErrorCode, type Frame, McpError } from "@anubis/core";
import { z } from "zod";

/** One note. */
interface Note {
  id: string;
  title: string;
  body: string;
}

// One store for the process; a real server would use a database.
const notes = new Map<string, Note>();
let nextId = 1;

const INDEX_URI = "notes://index";

type Role = "owner" | "reader";
const roleOf = (frame: Frame): Role => frame.assigns.role === "owner" ? "owner" : "reader";

const noteUri = (note: Note) => `notes://${note.id}`;
const render = (note: Note) => `# ${note.title}\n\n${note.body}`;

function find(id: string): Note {
  const note = notes.get(id);
  if (!note) throw new McpError(ErrorCode.INVALID_PARAMS, `No note with id ${id}`, { id });
  return note;
}

/** The store changed: the index resource did too. */
function changed(frame: Frame): void {
  frame.notify.resourceUpdated(INDEX_URI);
}

export default defineServer({
  name: "notes",
  version: "1.0.0",
  title: "Notes",

  // Runs on `initialize` (legacy sessions) or before every stateless request.
  // Whoever runs the server on stdio is its owner; over HTTP the role comes
  // from what an authentication middleware attached, and defaults to reader.
  init: (_clientInfo, frame) => {
    const attached = frame.context.assigns.role;
    frame.assigns.role = attached ?? (frame.context.transport === "stdio" ? "owner" : "reader");
  },

  instructions: (frame) =>
    roleOf(frame) === "owner"
      ? "Notes you own: add, search and delete them. Read one as notes://{id}."
      : "Shared notes: add and search them. Read one as notes://{id}.",

  tools: [
    defineTool({
      name: "add_note",
      description: "Adds a note and returns its URI",
      inputSchema: {
        type: "object",
        properties: {
          title: { type: "string", minLength: 1, maxLength: 200 },
          body: { type: "string" },
        },
        required: ["title", "body"],
      },
      // Declared output: the engine checks `structuredContent` against it.
      outputSchema: {
        type: "object",
        properties: { id: { type: "string" }, uri: { type: "string" } },
        required: ["id", "uri"],
      },
      handler: ({ title, body }, frame) => {
        const note = { id: String(nextId++), title, body };
        notes.set(note.id, note);
        changed(frame);
        return {
          content: [{ type: "resource_link", uri: noteUri(note), name: title }],
          structuredContent: { id: note.id, uri: noteUri(note) },
        };
      },
    }),
    defineTool({
      name: "search_notes",
      description: "Finds notes whose title or body contains the query",
      inputSchema: {
        type: "object",
        properties: { query: { type: "string" } },
        required: ["query"],
      },
      annotations: { readOnlyHint: true },
      handler: ({ query }) => {
        const needle = query.toLowerCase();
        const found = [...notes.values()].filter((n) =>
          `${n.title}\n${n.body}`.toLowerCase().includes(needle)
        );
        if (found.length === 0) return `No note matches "${query}"`;
        return found.map((n) => `${noteUri(n)} ${n.title}`).join("\n");
      },
    }),
    defineTool({
      name: "recent_notes",
      description: "Lists the newest notes (or the oldest), at most `limit` of them",
      inputSchema: z.object({
        limit: z.number().int().min(1).max(100).default(5),
        order: z.enum(["newest", "oldest"]).default("newest"),
      }),
      annotations: { readOnlyHint: true },
      handler: ({ limit, order }) => {
        const all = [...notes.values()];
        const chosen = order === "newest" ? all.reverse() : all;
        if (chosen.length === 0) return "No notes yet";
        return chosen.slice(0, limit).map((n) => `${noteUri(n)} ${n.title}`).join("\n");
      },
    }),
    defineTool({
      name: "delete_note",
      description: "Deletes a note",
      inputSchema: { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
      annotations: { destructiveHint: true, idempotentHint: true },
      handler: ({ id }, frame) => {
        notes.delete(find(id).id);
        changed(frame);
        return `Deleted note ${id}`;
      },
    }),
  ],

  // Readers never see delete_note; calling it anyway is an unknown tool.
  serverTools: (tools, frame) =>
    roleOf(frame) === "owner" ? tools : tools.filter((tool) => tool.name !== "delete_note"),

  resources: [{
    uri: INDEX_URI,
    name: "index",
    title: "All notes",
    mimeType: "text/markdown",
    read: () => [...notes.values()].map((n) => `- [${n.title}](${noteUri(n)})`).join("\n"),
  }],

  resourceTemplates: [{
    uriTemplate: "notes://{id}",
    name: "note",
    title: "A note",
    mimeType: "text/markdown",
    complete: { id: (value) => [...notes.keys()].filter((id) => id.startsWith(value)) },
    read: (_uri, { id }) => render(find(id)),
  }],

  prompts: [{
    name: "summarize_notes",
    title: "Summarize notes",
    description: "Asks for a summary of the notes, or of those about a topic",
    arguments: [{ name: "topic", description: "Only notes mentioning this" }],
    handler: ({ topic }) => {
      const chosen = [...notes.values()].filter((n) =>
        !topic || render(n).toLowerCase().includes(topic.toLowerCase())
      );
      return [
        ...chosen.map((note) => ({
          role: "user" as const,
          content: {
            type: "resource" as const,
            resource: { uri: noteUri(note), mimeType: "text/markdown", text: render(note) },
          },
        })),
        {
          role: "user",
          content: {
            type: "text",
            text: topic
              ? `Summarize what these notes say about ${topic}.`
              : "Summarize these notes.",
          },
        },
      ];
    },
  }],

  // Stateless clients may cache cacheable results. The tool list depends on
  // the caller's role (private); the prompt list is the same for everyone;
  // notes change, so reads and the resource lists are kept briefly.
  cacheHints: (method) => {
    switch (method) {
      case "tools/list":
        return { ttlMs: 300_000, scope: "private" };
      case "prompts/list":
      case "resources/templates/list":
        return { ttlMs: 3_600_000, scope: "public" };
      default:
        return { ttlMs: 5_000, scope: "private" };
    }
  },
});
