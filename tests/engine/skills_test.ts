/**
 * Skills (SEP-2640): `defineSkill` and `skillsFromDirectory` make them, and a
 * server serves them through the engine: the extension declared where the
 * version has extensions, `skills/list` (paginated), `skills/get`,
 * `resources/directory/read`, each file as a resource, a caller's view chosen
 * by `serverSkills`, and nothing of it on a server without skills.
 */

import assert from "node:assert/strict";
import {
  defineServer,
  defineSkill,
  type ServerDefinition,
  skillsFromDirectory,
} from "@anubis/core";
import { connect } from "@anubis/testing";

const EXTENSION = "io.modelcontextprotocol/skills";

const manifest = (name: string, description = `The ${name} skill`) =>
  `---\nname: ${name}\ndescription: ${description}\n---\n# ${name}\n`;

const forms = defineSkill({
  "SKILL.md": manifest("forms"),
  "references/FIELDS.md": "# Fields\n",
  "references/deep/NOTE.txt": "deep\n",
  "logo.png": new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0xff, 0x00]),
});
const secret = defineSkill({ "SKILL.md": manifest("secret") }, { path: "ops/secret" });

async function sha256(bytes: Uint8Array): Promise<string> {
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as BufferSource));
  return "sha256:" + [...hash].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** A JSON-RPC error code of a rejected request. */
async function codeOf(promise: Promise<unknown>): Promise<number | undefined> {
  try {
    await promise;
  } catch (error) {
    return (error as { code?: number }).code;
  }
  return undefined;
}

function server(extra: Partial<ServerDefinition> = {}) {
  return defineServer({ name: "s", version: "1.0.0", skills: [forms, secret], ...extra });
}

Deno.test("defineSkill: URIs, order, media types and the frontmatter", () => {
  assert.equal(forms.uri, "skill://forms/SKILL.md");
  assert.deepEqual(forms.files.map((f) => [f.path, f.mimeType]), [
    ["SKILL.md", "text/markdown"],
    ["logo.png", "image/png"],
    ["references/FIELDS.md", "text/markdown"],
    ["references/deep/NOTE.txt", "text/plain"],
  ]);
  assert.deepEqual(forms.frontmatter, { name: "forms", description: "The forms skill" });
  assert.equal(secret.uri, "skill://ops/secret/SKILL.md");
  const spaced = defineSkill({ "SKILL.md": manifest("spaced"), "my notes.md": "x" });
  assert.equal(spaced.files[1].uri, "skill://spaced/my%20notes.md");
});

Deno.test("defineSkill refuses what it cannot serve, saying why", () => {
  const refused: [Record<string, string>, string | undefined, RegExp][] = [
    [{ "README.md": "x" }, undefined, /needs a SKILL.md/],
    [{ "SKILL.md": "no frontmatter" }, undefined, /SKILL.md: line 1/],
    [{ "SKILL.md": manifest("Bad_Name") }, undefined, /name "Bad_Name" must be/],
    [{ "SKILL.md": manifest("a--b") }, undefined, /must be 1-64/],
    [{ "SKILL.md": "---\nname: a\n---\n" }, undefined, /needs a non-empty description/],
    [{ "SKILL.md": manifest("a") }, "b", /path "b" must end in its name/],
    [{ "SKILL.md": manifest("a") }, "../a", /must end in its name/],
    [{ "SKILL.md": manifest("a"), "../x": "x" }, undefined, /is not inside it/],
  ];
  for (const [files, path, message] of refused) {
    assert.throws(() => defineSkill(files, path ? { path } : {}), message);
  }
  const many: Record<string, string> = { "SKILL.md": manifest("many") };
  for (let i = 0; i < 512; i++) many[`f${i}.txt`] = "";
  assert.throws(() => defineSkill(many), /513 files of \d+ bytes exceed the limits/);
});

Deno.test("skillsFromDirectory reads each folder with a SKILL.md, and refuses a link", async () => {
  const root = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${root}/beta/scripts`, { recursive: true });
    await Deno.mkdir(`${root}/alpha`);
    await Deno.mkdir(`${root}/not-a-skill`);
    await Deno.writeTextFile(`${root}/beta/SKILL.md`, manifest("beta"));
    await Deno.writeFile(`${root}/beta/scripts/run.sh`, new Uint8Array([0xde, 0xad]));
    await Deno.writeTextFile(`${root}/alpha/SKILL.md`, manifest("alpha"));
    await Deno.writeTextFile(`${root}/not-a-skill/README.md`, "x");
    await Deno.writeTextFile(`${root}/loose.md`, "x");
    const skills = await skillsFromDirectory(root);
    assert.deepEqual(skills.map((s) => s.uri), ["skill://alpha/SKILL.md", "skill://beta/SKILL.md"]);
    assert.deepEqual(skills[1].files.map((f) => f.path), ["SKILL.md", "scripts/run.sh"]);
    assert.deepEqual(skills[1].files[1].bytes, new Uint8Array([0xde, 0xad]));
    assert.deepEqual(await skillsFromDirectory(new URL(`file://${root}`)), skills);
    await Deno.symlink(`${root}/loose.md`, `${root}/alpha/link.md`);
    await assert.rejects(skillsFromDirectory(root), /alpha: link.md is not a regular file/);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("2026-07-28: the extension, skills/list with pages, skills/get and the digests", async () => {
  const client = await connect(server({ pageSize: 1 }));
  try {
    const discovered = await client.request("server/discover");
    const capabilities = discovered.capabilities as Record<string, Record<string, unknown>>;
    assert.deepEqual(capabilities.extensions[EXTENSION], { directoryRead: true });
    assert.ok(capabilities.resources);
    const first = await client.request("skills/list");
    assert.deepEqual([first.ttlMs, first.cacheScope], [0, "private"]);
    const second = await client.request("skills/list", { cursor: first.nextCursor });
    assert.equal(second.nextCursor, undefined);
    const entries = [...first.skills as Record<string, unknown>[], ...second.skills as []];
    assert.deepEqual(entries.map((e) => e.uri), [forms.uri, secret.uri]);
    const entry = entries[0] as { resources: { uri: string; digest: string; size: number }[] };
    assert.deepEqual(
      entry.resources,
      await Promise.all(forms.files.map(async (f) => ({
        uri: f.uri,
        digest: await sha256(f.bytes),
        size: f.bytes.byteLength,
      }))),
    );
    assert.equal(await codeOf(client.request("skills/list", { cursor: "bogus" })), -32602);
    const got = await client.request("skills/get", { uri: secret.uri });
    assert.deepEqual(got.skill, second.skills && (second.skills as unknown[])[0]);
    assert.equal(got.nextCursor, undefined);
    assert.equal(
      await codeOf(client.request("skills/get", { uri: "skill://nope/SKILL.md" })),
      -32602,
    );
  } finally {
    client.close();
  }
});

Deno.test("2026-07-28: resources/directory/read lists direct children, folders as inode/directory", async () => {
  const client = await connect(server());
  try {
    const root = await client.request("resources/directory/read", { uri: "skill://forms" });
    assert.deepEqual(root.resources, [
      {
        uri: "skill://forms/SKILL.md",
        name: "SKILL.md",
        mimeType: "text/markdown",
        size: manifest("forms").length,
      },
      { uri: "skill://forms/logo.png", name: "logo.png", mimeType: "image/png", size: 6 },
      { uri: "skill://forms/references", name: "references", mimeType: "inode/directory" },
    ]);
    const references = await client.request("resources/directory/read", {
      uri: "skill://forms/references",
    });
    assert.deepEqual((references.resources as { name: string }[]).map((r) => r.name), [
      "FIELDS.md",
      "deep",
    ]);
    for (const uri of ["skill://forms/SKILL.md", "skill://forms/references/", "skill://other"]) {
      assert.equal(await codeOf(client.request("resources/directory/read", { uri })), -32602, uri);
    }
  } finally {
    client.close();
  }
});

Deno.test("skill files are resources: each SKILL.md listed, every file read as text or blob", async () => {
  const client = await connect(
    server({ resources: [{ uri: "test://a", name: "a", read: () => "a" }] }),
  );
  try {
    const { resources } = await client.listResources();
    assert.deepEqual(resources, [
      { uri: "test://a", name: "a" },
      {
        uri: forms.uri,
        name: "forms",
        description: "The forms skill",
        mimeType: "text/markdown",
        size: manifest("forms").length,
      },
      {
        uri: secret.uri,
        name: "secret",
        description: "The secret skill",
        mimeType: "text/markdown",
        size: manifest("secret").length,
      },
    ]);
    const text = await client.readResource("skill://forms/references/FIELDS.md");
    assert.deepEqual(text.contents, [{
      uri: "skill://forms/references/FIELDS.md",
      mimeType: "text/markdown",
      text: "# Fields\n",
    }]);
    const binary = await client.readResource("skill://forms/logo.png");
    assert.deepEqual(binary.contents, [{
      uri: "skill://forms/logo.png",
      mimeType: "image/png",
      blob: btoa(String.fromCharCode(0x89, 0x50, 0x4e, 0x47, 0xff, 0x00)),
    }]);
    assert.equal(await codeOf(client.readResource("skill://forms/missing.md")), -32602);
  } finally {
    client.close();
  }
});

Deno.test("serverSkills withholds a skill from a caller: listing, get, read and directory alike", async () => {
  const guarded = server({
    serverSkills: (skills, frame) =>
      frame.context.assigns?.role === "ops" ? skills : skills.filter((s) => s !== secret),
  });
  const ops = await connect(guarded, { assigns: { role: "ops" } });
  const guest = await connect(guarded, { assigns: { role: "guest" } });
  try {
    const uris = async (client: typeof ops) =>
      ((await client.request("skills/list")).skills as { uri: string }[]).map((s) => s.uri);
    assert.deepEqual(await uris(ops), [forms.uri, secret.uri]);
    assert.deepEqual(await uris(guest), [forms.uri]);
    assert.equal((await ops.readResource(secret.uri)).contents.length, 1);
    assert.equal(await codeOf(guest.request("skills/get", { uri: secret.uri })), -32602);
    assert.equal(await codeOf(guest.readResource(secret.uri)), -32602);
    assert.equal(
      await codeOf(guest.request("resources/directory/read", { uri: "skill://ops/secret" })),
      -32602,
    );
    assert.ok(!(await guest.listResources()).resources.some((r) => r.uri === secret.uri));
  } finally {
    ops.close();
    guest.close();
  }
});

Deno.test("serverSkills alone declares skills, and may make one per caller", async () => {
  const perCaller = defineServer({
    name: "s",
    version: "1.0.0",
    serverSkills: (_skills, frame) => [
      defineSkill({ "SKILL.md": manifest("mine", `For ${frame.context.assigns?.user}`) }),
    ],
  });
  const client = await connect(perCaller, { assigns: { user: "ada" } });
  try {
    const { skill } = await client.request("skills/get", { uri: "skill://mine/SKILL.md" });
    assert.deepEqual((skill as { frontmatter: unknown }).frontmatter, {
      name: "mine",
      description: "For ada",
    });
  } finally {
    client.close();
  }
});

Deno.test("skillsDirectoryRead: false declares the extension without directoryRead", async () => {
  const client = await connect(server({ skillsDirectoryRead: false }));
  try {
    const discovered = await client.request("server/discover");
    const extensions = (discovered.capabilities as { extensions: Record<string, unknown> })
      .extensions;
    assert.deepEqual(extensions[EXTENSION], {});
    const read = client.request("resources/directory/read", { uri: "skill://forms" });
    assert.equal(await codeOf(read), -32601);
  } finally {
    client.close();
  }
});

Deno.test("a server without skills declares nothing and answers the skills methods -32601", async () => {
  const plain = defineServer({
    name: "s",
    version: "1.0.0",
    tools: [{ name: "t", handler: () => "" }],
  });
  assert.equal(plain.skills.size, 0);
  const client = await connect(plain);
  try {
    const discovered = await client.request("server/discover");
    assert.equal((discovered.capabilities as Record<string, unknown>).extensions, undefined);
    for (const method of ["skills/list", "skills/get", "resources/directory/read"]) {
      const params = method === "skills/list" ? {} : { uri: "skill://x/SKILL.md" };
      assert.equal(await codeOf(client.request(method, params)), -32601, method);
    }
  } finally {
    client.close();
  }
});

Deno.test("2025-11-25: no extensions, so no skills methods; the files are plain resources", async () => {
  const client = await connect(server(), { version: "2025-11-25" });
  try {
    const capabilities = client.initializeResult!.capabilities as Record<string, unknown>;
    assert.equal(capabilities.extensions, undefined);
    assert.ok(capabilities.resources);
    assert.equal(await codeOf(client.request("skills/list")), -32601);
    const read = await client.readResource("skill://forms/references/deep/NOTE.txt");
    assert.deepEqual(read.contents, [{
      uri: "skill://forms/references/deep/NOTE.txt",
      mimeType: "text/plain",
      text: "deep\n",
    }]);
  } finally {
    client.close();
  }
});

Deno.test("two skills at one URI are refused by defineServer", () => {
  assert.throws(
    () => defineServer({ name: "s", version: "1", skills: [forms, forms] }),
    /Duplicate skill/,
  );
});
