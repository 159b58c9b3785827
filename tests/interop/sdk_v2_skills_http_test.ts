/**
 * Skills (SEP-2640) over Streamable HTTP between `cli serve
 * examples/everything.ts --http` (a real child process on a free port) and the
 * official clients: the v2 client's `SkillsClient` (2.4.0) at 2026-07-28
 * lists, gets, reads and browses the skills, verifying every file against its
 * entry (size, sha256 digest, frontmatter); the v1 client at 2025-11-25, a
 * version without extensions, reads the same files as plain resources and is
 * told the skills methods do not exist.
 */

import assert from "node:assert/strict";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { SkillsClient } from "@modelcontextprotocol/client/ext/skills";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as StreamableHttpV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { z } from "zod";
import { startHttpServer } from "../helpers/everything_http_server.ts";

const PDF = "skill://pdf-processing/SKILL.md";
const NOTES = "skill://acme/release-notes/SKILL.md";
const SKILLS_DIR = new URL("../../examples/everything/skills/pdf-processing/", import.meta.url);

Deno.test("skills over HTTP: the SDK v2 SkillsClient lists, gets, reads and browses them at 2026-07-28", async (t) => {
  const server = await startHttpServer();
  const client = new Client({ name: "skills-host", version: "1.0.0" }, {
    versionNegotiation: { mode: { pin: "2026-07-28" } },
  });
  try {
    await client.connect(new StreamableHTTPClientTransport(server.url));
    const skills = new SkillsClient(client);

    await t.step("the extension is declared, with directoryRead", () => {
      assert.equal(skills.supported, true);
      assert.equal(skills.directoryRead, true);
    });

    const listing = await skills.list();
    await t.step("skills/list: both skills, valid, with the cache fields", () => {
      assert.deepEqual(listing.invalid, []);
      assert.deepEqual(listing.skills.map((s) => s.uri), [PDF, NOTES]);
      assert.deepEqual([listing.ttlMs, listing.cacheScope], [60_000, "public"]);
      const pdf = listing.skills[0];
      assert.deepEqual(pdf.frontmatter, {
        name: "pdf-processing",
        description: "Extract text from PDF files, fill PDF forms and merge documents.",
        license: "MIT",
        metadata: { author: "anubis", version: "1.0" },
      });
      assert.deepEqual(
        (pdf.resources as { uri: string }[]).map((r) => r.uri),
        [
          PDF,
          "skill://pdf-processing/references/FORMS.md",
          "skill://pdf-processing/scripts/fill.py",
        ],
      );
    });

    await t.step("read: SKILL.md and a reference, each verified against the entry", async () => {
      const manifest = await skills.read(listing.skills[0]);
      assert.equal(manifest.verified, true);
      assert.equal(manifest.frontmatter?.name, "pdf-processing");
      assert.match(manifest.body ?? "", /^# PDF processing/m);
      assert.equal(manifest.text, await Deno.readTextFile(new URL("SKILL.md", SKILLS_DIR)));
      const forms = await skills.read(listing.skills[0], "references/FORMS.md");
      assert.equal(forms.verified, true);
      assert.equal(forms.mimeType, "text/markdown");
      assert.deepEqual(
        forms.bytes,
        await Deno.readFile(new URL("references/FORMS.md", SKILLS_DIR)),
      );
      const notes = await skills.read(listing.skills[1], "templates/NOTES.md");
      assert.equal(notes.text, "# Release {version}\n\n## Changes\n");
    });

    await t.step("skills/get: one skill by URI; an unknown URI is -32602", async () => {
      const got = await skills.get(NOTES);
      assert.deepEqual(got.skill, listing.skills[1]);
      assert.deepEqual([got.ttlMs, got.cacheScope], [60_000, "public"]);
      await assert.rejects(
        skills.get("skill://nothing-here/SKILL.md"),
        (error: { code?: number }) => error.code === -32602,
      );
    });

    await t.step("resources/directory/read: a skill's folder and a sub-folder", async () => {
      const root = await skills.readDirectory("skill://pdf-processing");
      assert.deepEqual(root.resources.map((r) => [r.name, r.mimeType]), [
        ["SKILL.md", "text/markdown"],
        ["references", "inode/directory"],
        ["scripts", "inode/directory"],
      ]);
      const scripts = await skills.readDirectory("skill://pdf-processing/scripts");
      assert.deepEqual(scripts.resources.map((r) => r.uri), [
        "skill://pdf-processing/scripts/fill.py",
      ]);
      await assert.rejects(
        skills.readDirectory(PDF),
        (error: { code?: number }) => error.code === -32602,
      );
    });
  } finally {
    await client.close();
    await server.stop();
  }
});

Deno.test("skills over HTTP at 2025-11-25: no extension, the files are plain resources", async () => {
  const server = await startHttpServer();
  const client = new ClientV1({ name: "legacy-host", version: "1.0.0" });
  try {
    await client.connect(new StreamableHttpV1(server.url));
    assert.equal(client.getServerCapabilities()?.extensions, undefined);
    const { resources } = await client.listResources();
    const manifest = resources.find((r: { uri: string }) => r.uri === PDF);
    assert.deepEqual(manifest, {
      uri: PDF,
      name: "pdf-processing",
      description: "Extract text from PDF files, fill PDF forms and merge documents.",
      mimeType: "text/markdown",
      size: (await Deno.readFile(new URL("SKILL.md", SKILLS_DIR))).byteLength,
    });
    const read = await client.readResource({ uri: "skill://pdf-processing/scripts/fill.py" });
    assert.deepEqual(read.contents, [{
      uri: "skill://pdf-processing/scripts/fill.py",
      mimeType: "text/x-python",
      text: await Deno.readTextFile(new URL("scripts/fill.py", SKILLS_DIR)),
    }]);
    await assert.rejects(
      client.request({ method: "skills/list", params: {} }, z.object({})),
      (error: { code?: number }) => error.code === -32601,
    );
  } finally {
    await client.close();
    await server.stop();
  }
});
