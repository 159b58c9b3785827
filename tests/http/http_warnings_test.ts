/**
 * The warnings of `cli serve --http` over a real child process: a KV file
 * found empty (0 bytes) where the stores expected data, once even when both
 * stores share it; a non-loopback bind that turns the Host check off, naming
 * `--allowed-host`, and one that turns both connection timeouts off. The
 * bind test never listens beyond loopback: the port
 * is held on 127.0.0.1, so binding 0.0.0.0 to it fails after the warning.
 */

import assert from "node:assert/strict";

const ROOT = new URL("../..", import.meta.url);

/** Runs `cli serve examples/hello.ts --http ...flags`, reading stderr until `until` or the end. */
async function serve(flags: string[], until: string) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "cli/main.ts", "serve", "examples/hello.ts", "--http", ...flags],
    cwd: ROOT,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let stderr = "";
  while (!stderr.includes(until)) {
    const { value, done } = await reader.read();
    if (done) break;
    stderr += value;
  }
  try {
    child.kill("SIGTERM");
  } catch {
    // already exited
  }
  for (let r = await reader.read(); !r.done; r = await reader.read()) stderr += r.value;
  const status = await child.status;
  return { stderr, code: status.code };
}

Deno.test("cli warnings: a KV file found empty is said once, even when both stores share it", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/truncated.kv`;
  await Deno.writeFile(path, new Uint8Array());
  try {
    const { stderr } = await serve(
      ["--port", "0", "--event-store", `kv:${path}`, "--session-store", `kv:${path}`],
      "listening on",
    );
    const warnings = stderr.split("\n").filter((line) => line.includes("is empty (0 bytes)"));
    assert.equal(warnings.length, 1, stderr);
    assert.match(warnings[0], /^anubis: warning: the KV file .*truncated\.kv is empty/);
    // A fresh file (none yet) is a first start: no warning.
    const fresh = await serve(
      ["--port", "0", "--session-store", `kv:${dir}/new.kv`],
      "listening on",
    );
    assert.doesNotMatch(fresh.stderr, /is empty/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cli warnings: a non-loopback bind without --allowed-host warns once, naming the flag; with both timeouts off, once more", async () => {
  // Holds the port on loopback, so the 0.0.0.0 bind fails after the warning.
  const holder = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const port = String((holder.addr as Deno.NetAddr).port);
    const { stderr, code } = await serve(["--host", "0.0.0.0", "--port", port], "\nanubis: ");
    assert.notEqual(code, 0);
    const warnings = stderr.split("\n").filter((line) => line.includes("Host check"));
    assert.equal(warnings.length, 1, stderr);
    assert.match(warnings[0], /--host 0\.0\.0\.0 is not a loopback address/);
    assert.match(warnings[0], /--allowed-host <host>/);
    // Its connections have the default header and idle timeouts: nothing to say about them.
    assert.doesNotMatch(stderr, /no header or idle timeout/);
    assert.doesNotMatch(stderr, /listening on/);
    // Both turned off, it says so once, naming the flags.
    const off = await serve(
      ["--host", "0.0.0.0", "--port", port, "--header-timeout", "0", "--idle-timeout", "0"],
      "no header or idle timeout",
    );
    assert.notEqual(off.code, 0);
    const timeouts = off.stderr.split("\n").filter((line) =>
      line.includes("no header or idle timeout")
    );
    assert.equal(timeouts.length, 1, off.stderr);
    assert.match(timeouts[0], /--header-timeout 0 and --idle-timeout 0/);
    assert.doesNotMatch(off.stderr, /listening on/);
  } finally {
    holder.close();
  }
});
