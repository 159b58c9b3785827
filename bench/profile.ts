/**
 * Profiles this SDK under one benchmark load and prints where the time goes:
 * `deno run -A bench/profile.ts [stateless|legacy|sessions|stdio|stdio-legacy] [SECONDS]`.
 *
 * Runs the server with `--cpu-prof`, loads it as `deno task bench` does
 * (wrk with 32 connections, or 32 stdio requests in flight), stops it so the
 * profile is written, and prints `cpu_profile.ts`'s summary. The profile file
 * stays in a temporary folder, whose path is printed, for Chrome DevTools.
 *
 * @module
 */

import { summarize } from "./cpu_profile.ts";
import { haveWrk, loadPost, loadSessionCreation } from "./http_load.ts";
import type { LoadShape, Measurement } from "./measurement.ts";
import { startServer } from "./process.ts";
import { HTTP, STDIO } from "./servers.ts";
import { loadStdio } from "./stdio_load.ts";
import { legacyCall, openSession, statelessCall } from "./wire.ts";

const KINDS = ["stateless", "legacy", "sessions", "stdio", "stdio-legacy"];

async function profileRun(kind: string, dir: string, shape: LoadShape): Promise<Measurement> {
  const profiled = (
    args: string[],
  ) => [args[0], "--cpu-prof", `--cpu-prof-dir=${dir}`, ...args.slice(1)];
  if (kind === "stdio") return await loadStdio(profiled(STDIO.cli.args), shape);
  if (kind === "stdio-legacy") return await loadStdio(profiled(STDIO.cli.args), shape, "legacy");
  const spec = kind === "sessions" ? HTTP.handlerManySessions : HTTP.handler;
  const server = await startServer(profiled(spec.args));
  try {
    if (kind === "stateless") return await loadPost(server.url, statelessCall(1), shape);
    const { sessionId, version } = await openSession(server.url);
    if (kind === "legacy") return await loadPost(server.url, legacyCall(sessionId, version), shape);
    return await loadSessionCreation(server.url, version, shape);
  } finally {
    await server.stop();
  }
}

if (import.meta.main) {
  const [kind = "stateless", seconds = "10"] = Deno.args;
  if (!KINDS.includes(kind)) {
    console.error(`usage: deno run -A bench/profile.ts [${KINDS.join("|")}] [SECONDS]`);
    Deno.exit(2);
  }
  if (!kind.startsWith("stdio") && !(await haveWrk())) {
    console.error("bench: wrk is missing: apt-get update && apt-get install -y wrk");
    Deno.exit(1);
  }
  const dir = await Deno.makeTempDir({ prefix: "anubis-profile-" });
  const shape = { connections: 32, seconds: Number(seconds), warmupSeconds: 1 };
  const result = await profileRun(kind, dir, shape);
  console.log(
    `${kind}: ${Math.round(result.rps)} req/s under the profiler, p50 ${
      result.p50Ms.toFixed(2)
    } ms`,
  );
  const files = [...Deno.readDirSync(dir)].filter((entry) => entry.name.endsWith(".cpuprofile"));
  if (files.length === 0) {
    console.error(`bench: no profile was written to ${dir}`);
    Deno.exit(1);
  }
  const path = `${dir}/${files[0].name}`;
  console.log(`profile: ${path}`);
  console.log(summarize(JSON.parse(await Deno.readTextFile(path)), 30).join("\n"));
}
