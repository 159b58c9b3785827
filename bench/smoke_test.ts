/**
 * CI's short smoke of the benchmarks: every server the benchmarks start
 * starts and answers, and each load path runs briefly. No timing assertion:
 * the numbers come from `deno task bench`.
 *
 * @module
 */

import assert from "node:assert/strict";
import {
  haveWrk,
  loadPost,
  loadSessionCreation,
  loadSessionCreationFromNode,
} from "./http_load.ts";
import { isClientBound, isServerBound } from "./measurement.ts";
import { buildNodeServers, nodeVersion } from "./node.ts";
import { ROOT, startServer } from "./process.ts";
import { HTTP, type ServerSpec, STDIO } from "./servers.ts";
import { loadStdio } from "./stdio_load.ts";
import { LEGACY_VERSION, legacyCall, openSession, post, statelessCall } from "./wire.ts";

// Children are ended by pid and awaited; their stderr drains finish after the
// test body, which the op sanitizer would report.
const options = { sanitizeOps: false, sanitizeResources: false };

async function answersStateless(spec: ServerSpec): Promise<void> {
  const server = await startServer(spec.args, undefined, spec.command);
  try {
    const { status, message } = await post(server.url, statelessCall(7));
    assert.equal(status, 200, `${spec.name}: ${JSON.stringify(message)}`);
    assert.equal(message.id, 7);
    const result = message.result as { content: { text: string }[] };
    assert.equal(result.content[0].text, "echo: hi");
  } finally {
    await server.stop();
  }
}

for (const spec of [HTTP.raw, HTTP.cli, HTTP.handler, HTTP.official, HTTP.tmcp]) {
  Deno.test(
    `bench smoke: ${spec.name} answers a stateless tools/call`,
    options,
    () => answersStateless(spec),
  );
}

async function answersInSession(spec: ServerSpec): Promise<void> {
  const server = await startServer(spec.args, undefined, spec.command);
  try {
    const { sessionId, version } = await openSession(server.url);
    assert.ok(sessionId);
    const { status, message } = await post(server.url, legacyCall(sessionId, version, 3));
    assert.equal(status, 200, `${spec.name}: ${JSON.stringify(message)}`);
    assert.equal((message.result as { content: { text: string }[] }).content[0].text, "echo: hi");
  } finally {
    await server.stop();
  }
}

Deno.test(
  "bench smoke: anubis cli serve answers tools/call in a legacy session",
  options,
  () => answersInSession(HTTP.cli),
);

// The Node rows (`--only=node`): bundled and installed into a temporary
// folder (npm install and each bundle bounded in time, each server given 30 s
// to listen and 10 s per request); skipped where `node` or `npm` is missing.
Deno.test({
  name: "bench smoke: the Node servers build, start and answer tools/call",
  ...options,
  ignore: (await nodeVersion()) === undefined,
}, async (t) => {
  const servers = await buildNodeServers();
  try {
    for (const spec of [servers.raw, servers.anubis, servers.official]) {
      await t.step(`${spec.name} answers a stateless tools/call`, () => answersStateless(spec));
    }
    for (const spec of [servers.anubis, servers.officialSessions]) {
      await t.step(
        `${spec.name} answers tools/call in a legacy session`,
        () => answersInSession(spec),
      );
    }
  } finally {
    await servers.remove();
  }
});

Deno.test("bench smoke: wrk loads the raw server for a second", {
  ...options,
  ignore: !(await haveWrk()),
}, async () => {
  const server = await startServer(HTTP.raw.args);
  try {
    const shape = { connections: 2, seconds: 1, warmupSeconds: 0 };
    const result = await loadPost(server.url, statelessCall(1), shape);
    assert.ok(result.requests > 0);
    assert.equal(result.errors, 0);
    assert.ok(result.clientCpuUs !== undefined && result.clientCores === 1);
    assert.equal(result.checked, undefined);
  } finally {
    await server.stop();
  }
});

Deno.test("bench smoke: wrk checks every body and counts the bad ones", {
  ...options,
  ignore: !(await haveWrk()),
}, async () => {
  const server = await startServer(HTTP.raw.args);
  try {
    const shape = { connections: 2, seconds: 1, warmupSeconds: 0, checkBodies: true };
    const good = await loadPost(server.url, statelessCall(1), shape);
    assert.ok(good.checked! > 0);
    assert.equal(good.badBodies, 0, good.firstBadBody);
    const wrong = await loadPost(server.url, { ...statelessCall(1), expected: "not this" }, shape);
    assert.equal(wrong.badBodies, wrong.checked);
    assert.match(wrong.firstBadBody!, /^unexpected result: status 200/);
    const sessions = await loadSessionCreation(server.url, LEGACY_VERSION, shape);
    assert.ok(sessions.sessions! > 0 && sessions.checked! > 0);
    assert.equal(sessions.badBodies, 0, sessions.firstBadBody);
  } finally {
    await server.stop();
  }
});

Deno.test("bench smoke: the Node session client opens checked sessions", options, async () => {
  const server = await startServer(HTTP.raw.args);
  try {
    const node = (await nodeVersion()) ? "node" : undefined;
    const shape = { connections: 2, seconds: 0.5, warmupSeconds: 0 };
    const result = await loadSessionCreationFromNode(
      server.url,
      LEGACY_VERSION,
      shape,
      node,
      1,
      server.pid,
    );
    assert.ok(result.sessions! > 0 && result.checked! > 0);
    assert.equal(result.badBodies, 0, result.firstBadBody);
    assert.ok(result.clientCpuUs! > 0 && result.cpuUsPerRequest! > 0);
    // The server's event loop was read over the same window: busy, never above its one core.
    assert.ok(result.serverThreadShare! > 0 && result.serverThreadShare! < 1.05);
  } finally {
    await server.stop();
  }
});

Deno.test("bench smoke: the A/B tool compares two servers of this tree for a round", {
  ...options,
  ignore: !(await haveWrk()),
}, async () => {
  const { code, stdout } = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "bench/ab.ts",
      "--rounds=1",
      "--seconds=1",
      ".:bench/servers/raw_http.ts",
      ".",
    ],
    cwd: ROOT,
    stdout: "piped",
    stderr: "inherit",
  }).output();
  assert.equal(code, 0);
  const lines = new TextDecoder().decode(stdout).trim().split("\n");
  assert.match(lines[0], /^stateless: 1 rounds of 1 s/);
  assert.match(
    lines[1],
    /^\.:bench\/servers\/raw_http\.ts {2}req\/s median \d+ {2}CPU µs median [\d.]+ .*\(1\.000× the first\)/,
  );
  assert.match(lines[2], /^\. {2}req\/s median \d+ {2}CPU µs median [\d.]+ /);
});

Deno.test(
  "bench smoke: the stdio A/B tool compares two trees' servers for a round",
  options,
  async () => {
    const { code, stdout } = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        "bench/stdio_ab.ts",
        "--rounds=1",
        "--seconds=0.3",
        "--in-flight=4",
        ".",
        ".",
      ],
      cwd: ROOT,
      stdout: "piped",
      stderr: "inherit",
    }).output();
    assert.equal(code, 0);
    const lines = new TextDecoder().decode(stdout).trim().split("\n");
    assert.match(lines[0], /^stdio stateless: 1 rounds of 0\.3 s, 4 in flight/);
    assert.match(
      lines[1],
      /^\. {2}req\/s median \d+ {2}CPU µs median [\d.]+ .*\(1\.000× the first\)/,
    );
    assert.match(lines[3], /^stdio legacy: 1 rounds/);
  },
);

for (const spec of Object.values(STDIO)) {
  Deno.test(`bench smoke: ${spec.name} round trips over stdio`, options, async () => {
    const shape = { connections: 4, seconds: 0.2, warmupSeconds: 0.1 };
    const result = await loadStdio(spec.args, shape, "era" in spec ? spec.era : undefined);
    assert.ok(result.requests > 0, `${spec.name} answered nothing`);
    assert.equal(result.errors, 0);
    assert.ok(result.serverThreadShare! > 0 && result.clientCpuUs! > 0);
  });
}

Deno.test("bench smoke: a saturated server is server-bound whatever its client did", () => {
  const run = { rps: 1, p50Ms: 0, p99Ms: 0, requests: 1, errors: 0, seconds: 1, clientCores: 1 };
  const busyClient = { ...run, clientCpuUs: 980_000 };
  assert.ok(isClientBound({ ...busyClient, serverThreadShare: 0.6 }));
  assert.ok(isClientBound(busyClient)); // the server's loop unread: the client's figure
  const both = { ...busyClient, serverThreadShare: 0.97 };
  assert.ok(isServerBound(both) && !isClientBound(both));
  assert.ok(!isClientBound({ ...run, clientCpuUs: 500_000, serverThreadShare: 0.5 }));
});

/** Runs a store benchmark briefly; the names of the rows it printed. */
async function benchRows(script: string): Promise<string[]> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-kv", script, "0.05"],
    cwd: ROOT,
  }).output();
  assert.ok(output.success, new TextDecoder().decode(output.stderr));
  return new TextDecoder().decode(output.stdout).split("\n")
    .filter((line) => line.startsWith("BENCH ")).map((line) => JSON.parse(line.slice(6)).name);
}

Deno.test("bench smoke: the event store benchmark runs", options, async () => {
  const names = await benchRows("bench/store_load.ts");
  assert.ok(names.includes("raw KV read-then-commit append"), names.join(", "));
  assert.ok(names.includes("KV store append"), names.join(", "));
});

Deno.test("bench smoke: the task store benchmark runs", options, async () => {
  const names = await benchRows("bench/task_load.ts");
  assert.deepEqual(
    names.toSorted(),
    ["KV store", "memory store", "raw KV commit", "raw KV round trip"],
  );
});
