/**
 * `deno task bench`: every benchmark in one run, on loopback, each against
 * baselines started in the same run, then `bench/RESULTS.md`.
 *
 * Flags: `--quick` (short runs, written to `bench/results/quick.md`),
 * `--only=stateless,legacy,sessions,stdio,stores,tasks,memory,cold,node`,
 * `--seconds=N` (measured seconds per HTTP/stdio run), `--out=PATH`,
 * `--session-clients=N` (client processes of the Node-client session table),
 * `--no-check-bodies` (wrk does not check the answers; on by default, and a
 * run with a bad answer exits 1 after writing its report).
 *
 * @module
 */

import { measureColdStart } from "./cold_start.ts";
import {
  haveWrk,
  loadPost,
  loadSessionCreation,
  loadSessionCreationFromNode,
} from "./http_load.ts";
import { buildNodeServers, nodeVersion } from "./node.ts";
import { type LoadShape, type Measurement, percentileOf } from "./measurement.ts";
import {
  cpuMicros,
  endAll,
  ROOT,
  type RunningServer,
  startServer,
  watchBusiestThread,
} from "./process.ts";
import {
  badBodies,
  checkTargets,
  renderOutcomes,
  renderTable,
  type Row,
  type Table,
  type Target,
} from "./report.ts";
import { HTTP, type ServerSpec, STDIO, withGcHook } from "./servers.ts";
import { measureSessionMemory } from "./session_memory.ts";
import { loadStdio } from "./stdio_load.ts";
import { legacyCall, openSession, statelessCall } from "./wire.ts";

const flags = new Map(
  Deno.args.map((arg) => arg.replace(/^--/, "").split("=", 2) as [string, string | undefined]),
);
const quick = flags.has("quick");
const seconds = Number(flags.get("seconds") ?? (quick ? 1 : 2));
const only = flags.get("only")?.split(",");
const out = flags.get("out") ?? `${ROOT}bench/${quick ? "results/quick.md" : "RESULTS.md"}`;
const CONNECTIONS = 32;
const checkBodies = !flags.has("no-check-bodies");
const http: LoadShape = { connections: CONNECTIONS, seconds, warmupSeconds: 1, checkBodies };
const ROUNDS = quick ? 1 : 3;
const SESSIONS = quick ? 1000 : 10_000;
const COLD_REPETITIONS = quick ? 2 : 5;
/** The whole run stops after this many seconds, finished or not. */
const TIME_LIMIT_S = quick ? 300 : 600;

const wanted = (key: string) => !only || only.includes(key);
const log = (line: string) => console.error(`bench: ${line}`);

/** Starts a server, runs `work` on it, stops it; a failure becomes the row's note. */
async function withServer(
  spec: ServerSpec,
  work: (server: RunningServer) => Promise<Omit<Row, "name">>,
): Promise<Row> {
  log(`${spec.name}: ${commandLine(spec)}`);
  let server: RunningServer | undefined;
  try {
    server = await startServer(spec.args, undefined, spec.command);
    return { name: spec.name, ...await work(server) };
  } catch (error) {
    return { name: spec.name, note: notMeasured(spec, error) };
  } finally {
    await server?.stop();
  }
}

const commandLine = (spec: ServerSpec) => `${spec.command ?? "deno"} ${spec.args.join(" ")}`;

function notMeasured(spec: ServerSpec, error: unknown): string {
  const reason = (error instanceof Error ? error.message : String(error)).split("\n")[0];
  log(`${spec.name}: ${reason}`);
  return `not measured: ${reason}`;
}

const errorNote = (result: Measurement) =>
  result.errors > 0 ? { result, note: `${result.errors} failed responses` } : { result };

/**
 * The servers in the order of one round: each round starts one server
 * later, so no server always follows the same one (or always goes first).
 */
function rotated<T>(entries: readonly T[], round: number): T[] {
  const start = round % entries.length;
  return [...entries.slice(start), ...entries.slice(0, start)];
}

/** Loads one server with a load shape. */
type Runner = (shape: LoadShape) => Promise<Measurement>;

/**
 * Compares servers under the same load: starts them all (idle servers cost
 * no CPU), warms each up, then runs `ROUNDS` rounds that visit every server
 * in turn, each round starting one server later, and keeps each server's
 * best round, so a burst of load from other processes on the machine hurts
 * one round, not one server.
 */
async function compare(
  specs: ServerSpec[],
  prepare: (server: RunningServer) => Promise<Runner>,
): Promise<Row[]> {
  const entries: { spec: ServerSpec; server?: RunningServer; run?: Runner; row: Row }[] = [];
  try {
    for (const spec of specs) {
      const entry: (typeof entries)[number] = { spec, row: { name: spec.name } };
      entries.push(entry);
      try {
        log(`${spec.name}: ${commandLine(spec)}`);
        entry.server = await startServer(spec.args, undefined, spec.command);
        entry.run = await prepare(entry.server);
        await entry.run({ ...http, seconds: http.warmupSeconds, warmupSeconds: 0 });
      } catch (error) {
        entry.run = undefined;
        entry.row.note = notMeasured(spec, error);
      }
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const entry of rotated(entries, round)) {
        if (!entry.run) continue;
        try {
          const pid = entry.server!.pid;
          const cpuBefore = cpuMicros(pid);
          const busiestThread = watchBusiestThread(pid);
          const result = await entry.run({ ...http, warmupSeconds: 0 });
          // A runner that reads the server's CPU over its own window keeps its figures.
          result.cpuUsPerRequest ??= (cpuMicros(pid) - cpuBefore) / result.requests;
          result.serverThreadShare ??= busiestThread();
          if (!entry.row.result || result.rps > entry.row.result.rps) {
            Object.assign(entry.row, errorNote(result));
          }
        } catch (error) {
          entry.row.note = notMeasured(entry.spec, error);
        }
      }
    }
  } finally {
    await Promise.all(entries.map((entry) => entry.server?.stop()));
  }
  return entries.map((entry) => entry.row);
}

const LOAD_SETUP = `wrk, ${CONNECTIONS} connections, 1 thread; each server warmed up ` +
  `${http.warmupSeconds} s, then the best of ${ROUNDS} rounds of ${seconds} s (servers taken ` +
  "in turn, each round starting one later). Server CPU is the server's process tree " +
  "(user + system from /proc) over the round; the server's event loop busy is its busiest " +
  "thread's CPU over the round's wall time, and above 90% the row is server-bound: the " +
  "server could not answer faster, so its req/s is its own. Client CPU is wrk's own (its " +
  "/proc/self/stat), and a row where wrk kept more than 90% of its core busy while the " +
  "server's event loop had time to spare is client-bound: its req/s is wrk's, so its rate " +
  "ratios are not shown (CPU ratios in brackets, baseline's CPU per request over the row's). " +
  (checkBodies
    ? "Every answer's body is checked by wrk (status, JSON-RPC result with the request's id " +
      "and the echoed text, JSON or SSE; see bench/lua/check.lua)"
    : "Bodies not checked (`--no-check-bodies`)");

/** An HTTP table: the first spec is the ceiling, the last two the peers (unless `baselines`). */
async function httpTable(
  key: string,
  title: string,
  setup: string,
  specs: ServerSpec[],
  prepare: (server: RunningServer) => Promise<Runner>,
  baselines = [specs[0], ...specs.slice(-2)],
): Promise<Table> {
  const load = await loadLine();
  return {
    key,
    title,
    setup: `${LOAD_SETUP}. ${setup} \`/proc/loadavg\` before the table: ${load}.`,
    rows: await compare(specs, prepare),
    baselines: baselines.map((spec) => spec.name),
  };
}

const prepareStateless = (s: RunningServer): Promise<Runner> =>
  Promise.resolve((shape) => loadPost(s.url, statelessCall(1), shape));

async function prepareLegacy(s: RunningServer): Promise<Runner> {
  const { sessionId, version } = await openSession(s.url);
  return (shape) => loadPost(s.url, legacyCall(sessionId, version, 1), shape);
}

const statelessTable = () =>
  httpTable(
    "stateless",
    "HTTP: stateless 2026-07-28 tools/call",
    "POST with `_meta` and MCP-Protocol-Version / Mcp-Method / Mcp-Name headers.",
    [HTTP.raw, HTTP.cli, HTTP.handler, HTTP.official, HTTP.tmcp],
    prepareStateless,
  );

const legacyTable = () =>
  httpTable(
    "legacy",
    "HTTP: legacy 2025-11-25 tools/call within an open session",
    "All connections use one session opened before the run. tmcp negotiates 2025-06-18 " +
      "(its newest legacy version).",
    [HTTP.raw, HTTP.cli, HTTP.officialSessions, HTTP.tmcp],
    prepareLegacy,
  );

const sessionsTable = () =>
  httpTable(
    "sessions",
    "HTTP: legacy session creation (initialize + notifications/initialized)",
    "req/s here is sessions per second (two requests each); latencies and CPU time are per " +
      "HTTP request, mixing both kinds. " +
      "The raw row answers initialize with a fixed result and a random session id. This SDK " +
      "runs as the bare handler with its live-session bound (default 10,000) raised to " +
      "1,000,000, since the run opens more sessions than that and never closes them.",
    [HTTP.raw, HTTP.handlerManySessions, HTTP.officialSessions, HTTP.tmcp],
    async (s) => {
      const { version } = await openSession(s.url);
      return (shape) => loadSessionCreation(s.url, version, shape);
    },
  );

/** Client processes of the Node-client session table (`--session-clients=N`). */
const SESSION_CLIENTS = Number(flags.get("session-clients") ?? 1);
/** Keep-alive loops of the Node-client session table in all, as in issue 21's figure. */
const SESSION_LOOPS = 16;

const sessionsFromNodeTable = async () => {
  const node = (await nodeVersion()) ? "node" : undefined;
  const client = `${node ? "Node" : "Deno"} fetch, ${SESSION_LOOPS} keep-alive loops in ` +
    `${SESSION_CLIENTS} process${SESSION_CLIENTS === 1 ? "" : "es"}`;
  return httpTable(
    "sessions-node",
    `HTTP: legacy session creation from a Node client (${client})`,
    "The session creation above, made by `bench/clients/sessions_client.mjs` instead of wrk " +
      "(the client of the independent figures in issue 21): each loop `fetch`es initialize, " +
      "then notifications/initialized with the returned Mcp-Session-Id; every answer checked. " +
      "Each client process warms up for 1 s first, outside the measured window (server CPU " +
      "too). Client CPU is the client processes' own (`process.cpuUsage()`), of one core per process: " +
      "where it is client-bound this table measures the client, and the wrk table above is the " +
      "server's figure.",
    [HTTP.raw, HTTP.handlerManySessions, HTTP.officialSessions, HTTP.tmcp],
    async (s) => {
      const { version } = await openSession(s.url);
      return (shape) =>
        loadSessionCreationFromNode(
          s.url,
          version,
          { ...shape, connections: SESSION_LOOPS },
          node,
          SESSION_CLIENTS,
          s.pid,
        );
    },
  );
};

/**
 * Runs `measure` on every spec, `rounds` times, taking the specs in turn
 * (each round starting one later); a failure becomes the spec's note and
 * ends its turns.
 */
async function inTurns<T>(
  specs: ServerSpec[],
  rounds: number,
  measure: (spec: ServerSpec) => Promise<T>,
): Promise<{ spec: ServerSpec; results: T[]; note?: string }[]> {
  const entries: { spec: ServerSpec; results: T[]; note?: string }[] = specs.map((spec) => ({
    spec,
    results: [],
  }));
  for (let round = 0; round < rounds; round++) {
    for (const entry of rotated(entries, round)) {
      if (entry.note) continue;
      try {
        entry.results.push(await measure(entry.spec));
      } catch (error) {
        entry.note = notMeasured(entry.spec, error);
      }
    }
  }
  return entries;
}

/** The Node rows (`node.ts`), plus this SDK's handler on Deno.serve for reference. */
const NODE_ROWS = {
  raw: "raw node:http",
  anubis: "anubis on Node",
  official: "official SDK v2 on Node",
  deno: "anubis handler on Deno.serve",
};

/**
 * The Node tables: the same two workloads as the `stateless` and `legacy`
 * tables, served under Node by this SDK's handler (through
 * `@hono/node-server`), by the official SDK v2 with its Node transport, and
 * by a raw `node:http` echo; servers bundled and installed by `node.ts`.
 */
async function nodeTables(version: string | undefined): Promise<Table[]> {
  const titles = [
    ["node-stateless", `Node ${version ?? ""}: HTTP stateless 2026-07-28 tools/call`],
    [
      "node-legacy",
      `Node ${version ?? ""}: HTTP legacy 2025-11-25 tools/call within an open session`,
    ],
  ];
  const setup = "The servers run under `node` as plain JavaScript: each module in " +
    "`bench/servers/node/` bundled by `deno bundle` (npm packages left external), the npm " +
    "packages installed next to it by npm at the pinned versions. This SDK is transport-http's " +
    "`createHttpHandler` in `getRequestListener((request) => handler(request))` of " +
    "`@hono/node-server` on `node:http`; the official SDK v2 uses `@modelcontextprotocol/node` " +
    "(`toNodeHandler(createMcpHandler(...))` stateless, one `NodeStreamableHTTPServerTransport` " +
    "per session); the raw row is a `node:http` JSON echo with no MCP work. The last row is this " +
    "SDK's handler on `Deno.serve`, for reference.";
  const failed = (reason: string): Table[] =>
    titles.map(([key, title]) => ({
      key,
      title,
      setup,
      rows: Object.values(NODE_ROWS).map((name) => ({ name, note: `not measured: ${reason}` })),
      baselines: [],
    }));
  if (!version) {
    log("node: not found, Node tables skipped");
    return failed("node not found");
  }
  let servers;
  try {
    servers = await buildNodeServers(log);
  } catch (error) {
    log(`node: ${error instanceof Error ? error.message : error}`);
    return failed(`build failed: ${String(error).split("\n")[0].slice(0, 200)}`);
  }
  try {
    const deno = { ...HTTP.handler, name: NODE_ROWS.deno };
    return [
      await httpTable(
        titles[0][0],
        titles[0][1],
        `Same requests as the stateless table. ${setup}`,
        [servers.raw, servers.anubis, servers.official, deno],
        prepareStateless,
        [servers.raw, servers.official],
      ),
      await httpTable(
        titles[1][0],
        titles[1][1],
        `Same requests as the legacy table, one session opened before the run. ${setup}`,
        [servers.raw, servers.anubis, servers.officialSessions, deno],
        prepareLegacy,
        [servers.raw, servers.officialSessions],
      ),
    ];
  } finally {
    await servers.remove();
  }
}

const STDIO_ROUNDS = quick ? 1 : 2;
const STDIO_SECONDS = quick ? 1 : 1.5;

async function stdioTables(): Promise<Table[]> {
  const tables: Table[] = [];
  for (const inFlight of [1, 32]) {
    const shape = { connections: inFlight, seconds: STDIO_SECONDS, warmupSeconds: 0.5 };
    const entries = await inTurns(
      [STDIO.raw, STDIO.cli, STDIO.cliLegacy, STDIO.official, STDIO.tmcp],
      STDIO_ROUNDS,
      (spec) => {
        log(`stdio ${inFlight} in flight: ${spec.name}`);
        return loadStdio(spec.args, shape, spec.era);
      },
    );
    const rows = entries.map(({ spec, results, note }): Row => {
      const best = results.reduce<Measurement | undefined>(
        (a, b) => (a && a.rps >= b.rps ? a : b),
        undefined,
      );
      return note || !best ? { name: spec.name, note } : { name: spec.name, ...errorNote(best) };
    });
    tables.push({
      key: `stdio${inFlight}`,
      title: `stdio: tools/call round trips, ${inFlight} in flight`,
      setup: `${inFlight} request(s) kept in flight over the child's stdin/stdout for ` +
        `${STDIO_SECONDS} s after 0.5 s warm-up; best of ${STDIO_ROUNDS} rounds taking the ` +
        "servers in turn (a fresh process each). Stateless (2026-07-28) calls, except the " +
        "2025-11-25 row: calls in one session opened first. CPU per round trip is the " +
        "child's, from /proc; its event loop busy is its busiest thread's CPU over the wall " +
        "time, and the client is this bench process (its own CPU, one core), pinned to one " +
        "core and the child to the other (taskset, on two cores or more). When neither " +
        "side is near 100%, the rate is the round trip's (pipes, both loops taking turns), " +
        "and the CPU ratio is the server's figure. The raw line echo parses each line and " +
        "answers a fixed result, one write per chunk read, reading and writing through one " +
        "reused buffer each (as cli serve does on Deno).",
      rows,
      baselines: [STDIO.raw.name, STDIO.official.name, STDIO.tmcp.name],
    });
  }
  return tables;
}

/** Runs a store benchmark in its own process: its `BENCH {...}` lines, parsed. */
async function benchProcess(script: string): Promise<({ name: string } & Measurement)[]> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-kv", script, String(quick ? 0.6 : 3)],
    cwd: ROOT,
    stderr: "inherit",
  }).output();
  return new TextDecoder().decode(output.stdout).split("\n")
    .filter((line) => line.startsWith("BENCH ")).map((line) => JSON.parse(line.slice(6)));
}

async function storeTables(): Promise<Table[]> {
  log("event stores");
  const results = await benchProcess("bench/store_load.ts");
  const rowsFor = (op: string): Row[] =>
    results.filter((r) => r.name.endsWith(` ${op}`))
      .map(({ name, ...result }) => ({ name: name.slice(0, -op.length - 1), result }));
  const raw = "raw KV read-then-commit";
  return [
    {
      key: "append",
      title: "Event stores: append",
      setup:
        "In one process, one append at a time into 8 sessions, a ~150-byte event; the stores " +
        "are taken in turn for 3 rounds and each keeps its best; req/s is " +
        "appends per second, latency per append. Deno KV on a local sqlite file.",
      rows: rowsFor("append"),
      baselines: [raw],
    },
    {
      key: "replay",
      title: "Event stores: replay",
      setup: "replay(session, 0) of a 500-event session, one at a time; req/s is events replayed " +
        "per second, latency per replay call.",
      rows: rowsFor("replay"),
      baselines: [raw],
    },
    ...await redisTables(),
  ];
}

/**
 * Appends through RedisEventStore, and the other Redis stores, against raw
 * Redis commands and KV; then `tools/call` through `cli serve --redis`
 * against the KV stores (when redis-server is here).
 */
async function redisTables(): Promise<Table[]> {
  const { redisAvailable } = await import("../tests/helpers/redis_server.ts");
  if (!redisAvailable) return [];
  log("event stores on Redis");
  const results = await benchProcess("bench/redis_load.ts");
  log("session, task and rate-limit stores on Redis");
  const stores = await benchProcess("bench/redis_store_load.ts");
  return [{
    key: "redis-append",
    title: "Event stores on Redis: append",
    setup: "A redis-server of its own on loopback; a ~150-byte event into 8 sessions per lane, " +
      "one at a time and 16 in flight. RedisEventStore.append is one EVALSHA (INCR, XADD, " +
      "bounds, PEXPIRE, PUBLISH); the raw row sends INCR and XADD pipelined (one round trip), " +
      "what an append needs at least; KvEventStore on a local sqlite file. Rows taken in turn " +
      "for 6 rounds, each keeps its best. Target: RedisEventStore at least 60% of raw.",
    rows: results.map(({ name, ...result }) => ({ name: name.replace(/ append$/, ""), result })),
    baselines: ["raw Redis INCR+XADD", "raw Redis INCR+XADD (16 in flight)"],
  }, {
    key: "redis-stores",
    title: "Session, task and rate-limit stores on Redis",
    setup: "`bench/redis_store_load.ts`: a redis-server of its own on loopback (AOF off), one " +
      "operation at a time: a session save then load, a task round trip (create, finish, read " +
      "back), a rate-limit take; beside the raw Redis commands that do the same work at least " +
      "and the Deno KV stores on a local sqlite file. Rows taken in turn for 4 rounds, each " +
      "keeps its best; compare each store's Redis row with its raw and KV rows.",
    rows: stores.map(({ name, ...result }) => ({ name, result })),
    baselines: [],
  }, ...await redisHttpTables()];
}

/**
 * `tools/call` through `cli serve --http --redis URL` (every store on Redis)
 * against the same cli on the KV stores (`--event-store kv:F --session-store
 * kv:F`) and on none, in one run.
 */
async function redisHttpTables(): Promise<Table[]> {
  const { startRedis } = await import("../tests/helpers/redis_server.ts");
  const redis = await startRedis();
  const dir = await Deno.makeTempDir({ prefix: "anubis-bench-redis-http-" });
  try {
    const onRedis: ServerSpec = {
      name: "cli serve --redis",
      args: [...HTTP.cli.args, "--redis", redis.url],
    };
    const onKv: ServerSpec = {
      name: "cli serve, KV stores",
      args: [
        ...HTTP.cli.args,
        "--event-store",
        `kv:${dir}/stores.kv`,
        "--session-store",
        `kv:${dir}/stores.kv`,
      ],
    };
    const specs = [HTTP.cli, onRedis, onKv];
    const setup = "A redis-server of its own on loopback (AOF off); the KV stores on one local " +
      "sqlite file; the cli with no store flag as the ceiling.";
    return [
      await httpTable(
        "redis-stateless",
        "HTTP on Redis: stateless 2026-07-28 tools/call",
        setup,
        specs,
        prepareStateless,
        [onKv, HTTP.cli],
      ),
      await httpTable(
        "redis-legacy",
        "HTTP on Redis: legacy 2025-11-25 tools/call within an open session",
        `${setup} All connections use one session opened before the run.`,
        specs,
        prepareLegacy,
        [onKv, HTTP.cli],
      ),
    ];
  } finally {
    await redis.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

const RAW_COMMIT = "raw KV commit";
const RAW_ROUND_TRIP = "raw KV round trip";

async function taskTable(): Promise<Table> {
  log("task stores");
  const results = await benchProcess("bench/task_load.ts");
  return {
    key: "tasks",
    title: "Task stores: create → complete → tasks/get round trips",
    setup: "In one process, one round trip at a time: store a new task (as before a " +
      "task-augmented `tools/call` is answered), store its outcome, read it back (`tasks/get`); " +
      "req/s is round trips per second. Beside them, in the same run, two raw Deno KV loops on " +
      "their own sqlite files: one commit of a new task-sized value per operation (the raw " +
      "commit rate), and the fewest KV operations of a durable round trip (a checked create, a read " +
      "then a checked write of the outcome, a read: two commits). The rows are taken in turn " +
      "for 6 rounds and each keeps its best.",
    rows: results.map(({ name, ...result }) => ({ name, result })),
    baselines: [RAW_COMMIT, RAW_ROUND_TRIP],
  };
}

async function memoryTable(): Promise<Table> {
  const rows = [];
  for (const spec of [HTTP.handlerManySessions, HTTP.officialSessions, HTTP.tmcp]) {
    rows.push(
      await withServer(withGcHook(spec), async (s) => {
        const memory = await measureSessionMemory(s, SESSIONS);
        const heap = `V8 heap ${Math.round(memory.heapPerSession).toLocaleString("en-US")} B`;
        const closed = memory.firstStillOpen ? "" : "; first session closed before the end";
        return { value: memory.rssPerSession, note: heap + closed };
      }),
    );
  }
  return {
    key: "memory",
    title: `Memory: resident bytes per idle legacy session at ${SESSIONS.toLocaleString("en-US")}`,
    setup: `${SESSIONS} sessions opened 16 at a time after 1,000 warm-up sessions; the server ` +
      "collects garbage as V8 does when memory runs out (a bench-only hook, `--expose-gc`: " +
      "memory-reducing full GCs that give back free heap pages) before each reading; RSS from /proc, " +
      "the V8 heap in use from `Deno.memoryUsage()`; growth divided by the sessions.",
    rows,
    baselines: [HTTP.officialSessions.name, HTTP.tmcp.name],
    valueLabel: "RSS bytes per session",
    format: (bytes) => `${Math.round(bytes).toLocaleString("en-US")} B`,
  };
}

async function coldTable(): Promise<Table> {
  const entries = await inTurns(
    [HTTP.raw, HTTP.cli, HTTP.official, HTTP.tmcp],
    COLD_REPETITIONS,
    (spec) => {
      log(`cold start: ${spec.name}`);
      return measureColdStart(spec.args);
    },
  );
  const rows = entries.map(({ spec, results, note }): Row =>
    note ? { name: spec.name, note } : {
      name: spec.name,
      value: percentileOf(results.toSorted((a, b) => a - b), 50),
    }
  );
  return {
    key: "cold",
    title: "Cold start: process start to first answered tools/call",
    setup: `Median of ${COLD_REPETITIONS} starts (servers taken in turn): spawn \`deno run\`, ` +
      "wait for the listening line, send one stateless tools/call, read the answer (module " +
      "graph already in Deno's cache).",
    rows,
    baselines: [HTTP.raw.name],
    valueLabel: "ms",
    format: (ms) => ms.toFixed(0),
  };
}

const TARGETS: Target[] = [
  {
    label: "stateless tools/call (cli serve) ≥ 65% of raw Deno.serve (CPU and req/s)",
    table: "stateless",
    row: HTTP.cli.name,
    baseline: HTTP.raw.name,
    atLeast: 0.65,
  },
  {
    label: "stateless tools/call (handler) ≥ 65% of raw Deno.serve (CPU and req/s)",
    table: "stateless",
    row: HTTP.handler.name,
    baseline: HTTP.raw.name,
    atLeast: 0.65,
  },
  {
    label: "stateless tools/call (cli serve) ≥ 10× official SDK v2",
    table: "stateless",
    row: HTTP.cli.name,
    baseline: HTTP.official.name,
    atLeast: 10,
  },
  {
    label: "stateless tools/call (handler) ≥ 10× official SDK v2",
    table: "stateless",
    row: HTTP.handler.name,
    baseline: HTTP.official.name,
    atLeast: 10,
  },
  {
    label: "legacy session tools/call ≥ 60% of ceiling",
    table: "legacy",
    row: HTTP.cli.name,
    baseline: HTTP.raw.name,
    atLeast: 0.6,
  },
  {
    label: "session creation ≥ 3× tmcp (a client that is not the bottleneck)",
    table: "sessions",
    row: HTTP.handler.name,
    baseline: HTTP.tmcp.name,
    atLeast: 3,
  },
  {
    label: "stdio 2026-07-28 at 32 in flight ≥ 70% of raw line echo",
    table: "stdio32",
    row: STDIO.cli.name,
    baseline: STDIO.raw.name,
    atLeast: 0.7,
  },
  {
    label: "≤ 2 KiB per idle legacy session (bytes)",
    table: "memory",
    row: HTTP.handler.name,
    atMost: 2048,
  },
  {
    label: "cold start ≤ 3× raw Deno start",
    table: "cold",
    row: HTTP.cli.name,
    baseline: HTTP.raw.name,
    atMost: 3,
  },
  {
    label: "stateless tools/call on Node ≥ 5× official SDK v2 on Node",
    table: "node-stateless",
    row: NODE_ROWS.anubis,
    baseline: NODE_ROWS.official,
    atLeast: 5,
  },
  {
    label: "legacy session tools/call on Node ≥ 5× official SDK v2 on Node",
    table: "node-legacy",
    row: NODE_ROWS.anubis,
    baseline: NODE_ROWS.official,
    atLeast: 5,
  },
  {
    label: "KV append ≥ 80% of a raw read-then-commit KV loop",
    table: "append",
    row: "KV store",
    baseline: "raw KV read-then-commit",
    atLeast: 0.8,
  },
  {
    label: "KV task round trips ≥ 60% of the raw KV commit rate (two commits each: at most 50%)",
    table: "tasks",
    row: "KV store",
    baseline: RAW_COMMIT,
    atLeast: 0.6,
  },
  {
    label: "KV task round trips ≥ 60% of a raw KV round trip loop",
    table: "tasks",
    row: "KV store",
    baseline: RAW_ROUND_TRIP,
    atLeast: 0.6,
  },
];

async function text(command: string, args: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await new Deno.Command(command, { args }).output();
    const decoded = new TextDecoder().decode(stdout) + new TextDecoder().decode(stderr);
    return decoded.trim();
  } catch {
    return "unavailable";
  }
}

async function environment(node: string | undefined): Promise<string[]> {
  const cpu = (await Deno.readTextFile("/proc/cpuinfo")).match(/model name\s*:\s*(.*)/)?.[1];
  const memory = (await Deno.readTextFile("/proc/meminfo")).match(/MemTotal:\s*(\d+)/)?.[1];
  const read = async (path: string) => JSON.parse(await Deno.readTextFile(`${ROOT}${path}`));
  const imports = {
    ...(await read("deno.json")).imports,
    ...(await read("bench/deno.json")).imports,
  };
  const peers = ["@modelcontextprotocol/server", "tmcp", "@tmcp/transport-http", "zod", "valibot"];
  if (wanted("node")) peers.push("@modelcontextprotocol/node", "@hono/node-server");
  const pins = peers.map((name) => `\`${imports[name]}\``).join(", ");
  return [
    `- Date: ${new Date().toISOString()}`,
    `- Machine: ${cpu ?? "unknown CPU"}, ${navigator.hardwareConcurrency} cores, ` +
    `${Math.round(Number(memory) / 1024 / 1024)} GiB, ${Deno.build.target}, ` +
    `kernel ${(await text("uname", ["-r"]))}; load average at start ${await loadAverage()}`,
    `- Versions: Deno ${Deno.version.deno} (V8 ${Deno.version.v8}), ` +
    `${(await text("wrk", ["--version"])).split("\n")[0].split(" [")[0]}, ` +
    `anubis at ${await text("git", ["-C", ROOT, "rev-parse", "--short", "HEAD"])}` +
    `${await uncommitted()}; peers ${pins}` +
    (wanted("node") ? `; Node ${node ?? "not found"}` : ""),
    `- Command: \`deno task bench${Deno.args.length ? " " + Deno.args.join(" ") : ""}\``,
  ];
}

/** Notes source files outside bench/ that differ from HEAD (work in progress was measured). */
async function uncommitted(): Promise<string> {
  const status = await text("git", ["-C", ROOT, "status", "--porcelain", "--untracked-files=no"]);
  const changed = status.split("\n").map((line) => line.trim().split(/\s+/).at(-1) ?? "")
    .filter((path) => path.endsWith(".ts") && !path.startsWith("bench/"));
  return changed.length === 0 ? "" : ` plus uncommitted changes to ${changed.join(", ")}`;
}

/** How many HTTP answers wrk checked in the measured rounds, and how many were bad. */
function bodyCheckSummary(tables: Table[]): string {
  if (!checkBodies) return "off (`--no-check-bodies`)";
  const rows = tables.flatMap((table) => table.rows);
  const checked = rows.reduce((sum, row) => sum + (row.result?.checked ?? 0), 0);
  const bad = rows.reduce((sum, row) => sum + (row.result?.badBodies ?? 0), 0);
  return `on; ${checked.toLocaleString("en-US")} answers checked in the kept rounds, ${bad} bad` +
    (bad > 0 ? " (the run fails)" : "");
}

/** The whole `/proc/loadavg` line (1, 5 and 15 minute averages, running/all tasks, last pid). */
async function loadLine(): Promise<string> {
  return (await Deno.readTextFile("/proc/loadavg")).trim();
}

const loadAverage = async () => `\`${await loadLine()}\``;

if (import.meta.main) {
  if (!(await haveWrk())) {
    console.error("bench: wrk is missing: apt-get update && apt-get install -y wrk");
    Deno.exit(1);
  }
  const started = performance.now();
  // Bounded in time whatever happens: past the limit, end every child and stop.
  const watchdog = setTimeout(async () => {
    log(`over the ${TIME_LIMIT_S} s limit: stopping`);
    await endAll();
    Deno.exit(1);
  }, TIME_LIMIT_S * 1000);
  const node = wanted("node") ? await nodeVersion() : undefined;
  const header = await environment(node);
  const tables: Table[] = [];
  if (wanted("stateless")) tables.push(await statelessTable());
  if (wanted("legacy")) tables.push(await legacyTable());
  if (wanted("sessions")) tables.push(await sessionsTable(), await sessionsFromNodeTable());
  if (wanted("stdio")) tables.push(...await stdioTables());
  if (wanted("stores")) tables.push(...await storeTables());
  if (wanted("tasks")) tables.push(await taskTable());
  if (wanted("memory")) tables.push(await memoryTable());
  if (wanted("cold")) tables.push(await coldTable());
  if (wanted("node")) tables.push(...await nodeTables(node));
  const outcomes = checkTargets(tables, TARGETS).filter((o) =>
    tables.some((t) => t.key === o.target.table)
  );
  const took = ((performance.now() - started) / 1000).toFixed(0);
  const report = [
    "# Benchmark results",
    "",
    "Generated by `deno task bench` (bench/run.ts); see bench/README.md. Every ratio divides " +
    "two rows of the same table, measured in the same run on the same machine; absolute " +
    "numbers move with the machine's load, ratios much less.",
    "",
    ...header,
    `- Took ${took} s; load average at end ${await loadAverage()}`,
    `- Body checks: ${bodyCheckSummary(tables)}`,
    "",
    "## Targets",
    "",
    renderOutcomes(outcomes),
    "",
    "## Measurements",
    "",
    tables.map(renderTable).join("\n\n"),
    "",
  ].join("\n");
  await Deno.mkdir(new URL(".", `file://${out}`), { recursive: true });
  await Deno.writeTextFile(out, report);
  // Keep the committed file as `deno fmt --check` wants it (CI checks it).
  await new Deno.Command(Deno.execPath(), { args: ["fmt", "--quiet", out], cwd: ROOT }).output();
  console.log(report);
  log(`wrote ${out} in ${took} s`);
  clearTimeout(watchdog);
  const bad = badBodies(tables);
  if (bad.length > 0) {
    for (const line of bad) log(line);
    Deno.exit(1);
  }
}
