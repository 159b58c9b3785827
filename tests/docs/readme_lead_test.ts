/**
 * The root README's lead, as a user would follow it: its server saved as
 * `server.ts` and its test as `server_test.ts` in a directory of their own,
 * and `deno test -A` passes there (with this workspace's imports standing in
 * for JSR's).
 */

import assert from "node:assert/strict";
import { runCommand } from "../helpers/command.ts";

const ROOT = new URL("../../", import.meta.url);

Deno.test("README: the lead server and its server_test.ts pass deno test", async () => {
  const readme = await Deno.readTextFile(new URL("README.md", ROOT));
  const blocks = [...readme.matchAll(/```ts( ignore)?\n([\s\S]*?)```/g)].map((m) => m[2]);
  const server = blocks[0];
  const test = blocks.find((block) => block.includes(`import server from "./server.ts";`));
  assert.match(server, /export default defineServer/);
  assert.ok(test, "the README shows a server_test.ts");
  const dir = await Deno.makeTempDir({ prefix: "anubis-readme-" });
  try {
    await Deno.writeTextFile(`${dir}/server.ts`, server);
    await Deno.writeTextFile(`${dir}/server_test.ts`, test);
    const config = new URL("deno.json", ROOT).pathname;
    const run = await runCommand(
      Deno.execPath(),
      ["test", "-A", "--config", config, "server_test.ts"],
      { cwd: dir, signal: AbortSignal.timeout(120_000) },
    );
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /ok \| 1 passed \| 0 failed/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
