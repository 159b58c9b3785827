/**
 * Command-line parsing of `anubis serve` and `anubis init`.
 *
 * @module
 */

/**
 * The parsed `serve` command.
 *
 * @example
 * ```ts
 * import { parseArgs } from "./_args.ts";
 * import assert from "node:assert/strict";
 * const parsed = parseArgs(["serve", "server.ts", "--http", "--port", "9000"]);
 * assert(parsed.kind === "serve");
 * assert.equal(parsed.options.port, 9000);
 * ```
 */
export interface ServeOptions {
  /** The server module path or URL. */
  module: string;
  /** Serve Streamable HTTP instead of stdio. */
  http: boolean;
  /** The HTTP bind address. */
  host: string;
  /** The HTTP port (0 picks a free one). */
  port: number;
  /** The HTTP endpoint path. */
  path: string;
  /** `memory`, `kv` or `kv:PATH`, when resumability is on. */
  eventStore?: string;
  /** `kv` or `kv:PATH`, when sessions are persisted. */
  sessionStore?: string;
  /** `--redis redis://…`: every store and bus on this Redis (`rediss://` for TLS). */
  redis?: string;
  /** `memory`, `kv` or `kv:PATH`: where tasks are kept (default memory). */
  taskStore?: string;
  /** `--max-tasks` and `--max-tasks-per-caller`: the task store's bounds (each absent one its default). */
  taskLimits?: { maxTasks?: number; maxTasksPerCaller?: number };
  /** Extra allowed `Origin` values. */
  allowedOrigins: string[];
  /** Extra allowed `Host` values. */
  allowedHosts: string[];
  /** The HTTP limits the flags set (each absent one keeps the handler's default). */
  limits?: HttpLimitFlags;
  /** Origins allowed to call cross-origin from a browser (CORS); empty turns CORS off. */
  corsOrigins: string[];
  /** The OAuth issuer whose JWT access tokens are required (turns auth on, with `authJwks`). */
  authIssuer?: string;
  /** The JWKS URL of the issuer's signing keys. */
  authJwks?: string;
  /** The token audience and canonical resource URL (default: the URL listened on). */
  authAudience?: string;
  /** Scopes every request's token needs (else 403 `insufficient_scope`); needs `authIssuer`. */
  authScopes?: string[];
  /** Signs `requestState` (else `ANUBIS_REQUEST_STATE_SECRET`, else shared through KV). */
  requestStateSecret?: string;
  /** A rotated-out secret that still opens states (else `ANUBIS_REQUEST_STATE_PREVIOUS_SECRET`). */
  requestStatePreviousSecret?: string;
  /**
   * `--rate-limit N/s` and `--rate-limit-burst N`: per-caller POSTs a second
   * and at once (burst default: twice the rate), shared through KV when a
   * store is on KV.
   */
  rateLimit?: { perSecond?: number; burst?: number };
  /**
   * `--trusted-proxy CIDR[,CIDR]` (repeatable): proxies whose `Forwarded` /
   * `X-Forwarded-For` name the client, for the per-client bounds and rate limit.
   */
  trustedProxies?: string[];
  /** `--log-level`: the least level of the operator's log on stderr (default info). */
  logLevel: "debug" | "info" | "warn" | "error" | "silent";
  /** `--log-format`: `pretty` lines (`anubis: …`, the default) or `json` lines. */
  logFormat: "json" | "pretty";
}

/**
 * The HTTP handler limits `serve` flags may set (see `HttpHandlerOptions` of
 * `@anubis/transport-http` for each one's default).
 *
 * @example
 * ```ts
 * import { parseArgs } from "./_args.ts";
 * const parsed = parseArgs(["serve", "s.ts", "--http", "--max-sessions-per-client", "50"]);
 * if (parsed.kind !== "serve" || parsed.options.limits?.maxSessionsPerClient !== 50) {
 *   throw new Error("the flag sets the limit");
 * }
 * ```
 */
export interface HttpLimitFlags {
  /** `--max-sessions` */
  maxSessions?: number;
  /** `--max-streams` */
  maxStreams?: number;
  /** `--max-sessions-per-client` */
  maxSessionsPerClient?: number;
  /** `--max-streams-per-client` */
  maxStreamsPerClient?: number;
  /** `--max-batch-entries` */
  maxBatchEntries?: number;
  /** `--body-timeout` (milliseconds) */
  bodyTimeoutMs?: number;
  /** `--header-timeout` (milliseconds; 0 turns it off) */
  headersTimeoutMs?: number;
  /** `--idle-timeout` (milliseconds; 0 turns it off) */
  idleTimeoutMs?: number;
  /** `--max-session-bytes`: what one session may retain of its client's data */
  maxSessionBytes?: number;
  /** `--max-session-bytes-per-client`: what one client's sessions may retain together */
  maxSessionBytesPerClient?: number;
  /** `--max-stored-session-bytes-per-client` (with `--session-store`) */
  maxStoredSessionBytesPerClient?: number;
  /** `--max-stored-session-bytes` (with `--session-store`) */
  maxStoredSessionBytes?: number;
}

/** The numeric limit flags and the limit each sets. */
const LIMIT_FLAGS: Readonly<Record<string, keyof HttpLimitFlags>> = {
  "--max-sessions": "maxSessions",
  "--max-streams": "maxStreams",
  "--max-sessions-per-client": "maxSessionsPerClient",
  "--max-streams-per-client": "maxStreamsPerClient",
  "--max-batch-entries": "maxBatchEntries",
  "--body-timeout": "bodyTimeoutMs",
  "--header-timeout": "headersTimeoutMs",
  "--idle-timeout": "idleTimeoutMs",
  "--max-session-bytes": "maxSessionBytes",
  "--max-session-bytes-per-client": "maxSessionBytesPerClient",
  "--max-stored-session-bytes-per-client": "maxStoredSessionBytesPerClient",
  "--max-stored-session-bytes": "maxStoredSessionBytes",
};

/**
 * What the command line asks for.
 *
 * @example
 * ```ts
 * import { type ParsedArgs, parseArgs } from "./_args.ts";
 * import assert from "node:assert/strict";
 * const parsed: ParsedArgs = parseArgs(["serve", "server.ts", "--port", "0"]);
 * assert.equal(parsed.kind, "serve");
 * ```
 */
export type ParsedArgs =
  | { kind: "help" }
  | { kind: "serve"; options: ServeOptions }
  | { kind: "init"; dir: string }
  | { kind: "error"; message: string };

/**
 * The `--help` text.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { USAGE } from "./_args.ts";
 * assert.ok(USAGE.startsWith("Usage: anubis serve"));
 * assert.ok(USAGE.includes(".data/anubis.kv"));
 * ```
 */
export const USAGE: string = `Usage: anubis serve <server module> [options]
       anubis init [dir]

serve: serves the module's default export (a defineServer() definition) over
stdio, or over Streamable HTTP with --http.
init: writes a new project into dir (default .): server.ts, its deno.json
(imports from JSR; tasks serve, serve:http and test) and server_test.ts;
writes nothing if any of them exists.

The CLI runs on Deno; with only Node and npm, npx fetches Deno 2.9.6:

  npx deno@2.9.6 run -A cli/main.ts serve <module>          (a checkout of this repository)
  npx deno@2.9.6 run -A jsr:@anubis/cli serve <module>      (your own project)
  npx deno@2.9.6 run -A jsr:@anubis/cli init my-server      (start one)

Options:
  --http                    Serve Streamable HTTP instead of stdio
  --host <address>          HTTP bind address (default 127.0.0.1; any other
                            address turns the Host check off unless
                            --allowed-host names the hosts)
  --port <number>           HTTP port (default 8080; 0 picks a free port)
  --path <path>             HTTP endpoint path (default /mcp)
  --event-store <store>     Resumable streams: memory, kv or kv:<path> (default: off)
  --session-store <store>   Persist sessions: kv or kv:<path> (default: off)
  --redis <url>             Keep streams, sessions, tasks, rate-limit buckets,
                            the requestState key and changes on Redis, shared
                            by every instance given the same URL:
                            redis://[user:password@]host:port[/db] or
                            rediss:// (TLS); credentials also from
                            REDIS_USERNAME and REDIS_PASSWORD (not with
                            --event-store, --session-store, --task-store)
  --task-store <store>      Keep tasks: memory, kv or kv:<path> (default memory)
                            kv alone is the file .data/anubis.kv; several
                            instances may share one file
  --max-tasks <n>           Tasks the task store keeps at once, whatever their
                            status (default 10000; on kv, per instance; with
                            --redis, over all instances together)
  --max-tasks-per-caller <n>
                            Tasks one caller (a session, a principal, else a
                            client address) may hold at once (default: a tenth
                            of --max-tasks); beyond it task creation gets
                            -32050 "Too many tasks"
  --allowed-origin <origin> Also accept this Origin (repeatable)
  --allowed-host <host>     Also accept this Host (repeatable)
  --max-sessions <n>        Live sessions (default 10000); when full, a new
                            client's initialize ends the least recently used
                            idle session of the client holding the most
  --max-sessions-per-client <n>
                            Sessions one client address may hold (default 1000)
  --max-streams <n>         Open GET and listen streams (default 1000)
  --max-streams-per-client <n>
                            GET and listen streams one client address may hold
                            (default 100)
  --trusted-proxy <cidr,...>
                            Take the client address from Forwarded or
                            X-Forwarded-For when the peer is in one of these
                            IPv4/IPv6 CIDRs (repeatable; default: headers
                            ignored), for the per-client bounds and rate limit
  --max-batch-entries <n>   Entries in a JSON-RPC batch (default 1000)
  --max-session-bytes <n>   Bytes of client data (capabilities, clientInfo,
                            subscriptions) one session may retain (default
                            65536; an initialize over it gets -32602)
  --max-session-bytes-per-client <n>
                            Bytes of client data one client address's sessions
                            may retain together (default 16777216; 429 beyond)
  --max-stored-session-bytes-per-client <n>
                            Bytes of session records one client address may
                            keep in the session store (default 16777216)
  --max-stored-session-bytes <n>
                            Bytes of session records all clients may keep in
                            the session store (default 268435456)
  --body-timeout <ms>       A request body must arrive within this long, else
                            408 (default 30000; 0 turns it off)
  --header-timeout <ms>     Close a connection that has not sent a request's
                            headers within this long of connecting
                            (default 10000; 0 turns it off)
  --idle-timeout <ms>       Close a kept-alive connection that starts no new
                            request within this long of its previous one; a
                            response in progress is never cut (default 5000;
                            0: the header timeout bounds the wait instead)
  --cors <origin,...>       Let browser pages on these origins call the
                            endpoint (CORS preflights answered; each origin
                            is also an allowed Origin; repeatable)
  --auth-issuer <url>       Require OAuth JWT access tokens from this issuer
                            (with --auth-jwks); serves the protected-resource
                            metadata at /.well-known/oauth-protected-resource
  --auth-jwks <url>         The issuer's JWKS URL (its signing keys)
  --auth-audience <url>     The audience tokens must carry, also the served
                            resource URL (default: the URL listened on, from
                            --host, --port and --path, never the request's
                            Host; behind a proxy, give the public URL)
  --auth-scopes <scope,...> Scopes every request's token needs (with
                            --auth-issuer); a token lacking one gets 403
                            insufficient_scope naming them (repeatable)
  --request-state-secret <s>
                            Sign stateless multi round-trip state with this
                            secret (32+ characters; or the environment's
                            ANUBIS_REQUEST_STATE_SECRET). Without it, instances
                            on one KV store share a key kept in the store
  --request-state-previous-secret <s>
                            A secret rotated out that still opens state (or
                            ANUBIS_REQUEST_STATE_PREVIOUS_SECRET)
  --rate-limit <n>/s        Per caller (token subject, else client address)
                            at most n POSTs a second on average, else 429 with
                            Retry-After (default: off). Shared by every
                            instance on the KV store when a store is on KV
  --rate-limit-burst <n>    POSTs a caller may send at once (default 2n)
  --log-level <level>       The operator's log on stderr: debug, info, warn,
                            error or silent (default info)
  --log-format <format>     pretty (anubis: ... lines, the default) or json
                            (one JSON object a line)
  -h, --help                Show this help

Telemetry: with Deno's OpenTelemetry on (OTEL_DENO=true and the OTEL_*
variables of your exporter), every request gets a span and the MCP duration
metrics per OpenTelemetry's MCP semantic conventions.
`;

const VALUE_FLAGS = new Set([
  "--host",
  "--port",
  "--path",
  "--event-store",
  "--session-store",
  "--redis",
  "--task-store",
  "--max-tasks",
  "--max-tasks-per-caller",
  "--allowed-origin",
  "--allowed-host",
  "--cors",
  "--auth-issuer",
  "--auth-jwks",
  "--auth-audience",
  "--auth-scopes",
  "--request-state-secret",
  "--request-state-previous-secret",
  "--rate-limit",
  "--rate-limit-burst",
  "--trusted-proxy",
  "--log-level",
  "--log-format",
]);

/**
 * Parses the arguments after the script name.
 *
 * @param args The arguments.
 * @returns The command, help, or an error message.
 *
 * @example
 * ```ts
 * import { parseArgs } from "./_args.ts";
 * import assert from "node:assert/strict";
 * assert.equal(parseArgs(["serve"]).kind, "error");
 * ```
 */
export function parseArgs(args: readonly string[]): ParsedArgs {
  if (args.includes("-h") || args.includes("--help")) return { kind: "help" };
  const [command, ...rest] = args;
  if (command === "init") {
    const flag = rest.find((arg) => arg.startsWith("-"));
    if (flag) return { kind: "error", message: `unknown option: ${flag}` };
    if (rest.length > 1) return { kind: "error", message: `unexpected argument: ${rest[1]}` };
    return { kind: "init", dir: rest[0] ?? "." };
  }
  if (command !== "serve") {
    return {
      kind: "error",
      message: command ? `unknown command: ${command}` : "missing command: serve or init",
    };
  }
  const options: ServeOptions = {
    module: "",
    http: false,
    host: "127.0.0.1",
    port: 8080,
    path: "/mcp",
    allowedOrigins: [],
    allowedHosts: [],
    corsOrigins: [],
    logLevel: "info",
    logFormat: "pretty",
  };
  for (let i = 0; i < rest.length; i++) {
    let flag = rest[i];
    let value: string | undefined;
    const eq = flag.indexOf("=");
    if (flag.startsWith("--") && eq !== -1) {
      value = flag.slice(eq + 1);
      flag = flag.slice(0, eq);
    }
    if (!flag.startsWith("-")) {
      if (options.module) return { kind: "error", message: `unexpected argument: ${flag}` };
      options.module = flag;
      continue;
    }
    if (flag === "--http") {
      options.http = true;
      continue;
    }
    if (!VALUE_FLAGS.has(flag) && !(flag in LIMIT_FLAGS)) {
      return { kind: "error", message: `unknown option: ${flag}` };
    }
    value ??= rest[++i];
    if (value === undefined || value === "") {
      return { kind: "error", message: `${flag} needs a value` };
    }
    const limit = LIMIT_FLAGS[flag];
    if (limit) {
      const number = Number(value);
      const least = limit.endsWith("TimeoutMs") ? 0 : 1;
      if (!Number.isSafeInteger(number) || number < least) {
        return {
          kind: "error",
          message: `${flag} must be an integer of at least ${least}, got ${value}`,
        };
      }
      (options.limits ??= {})[limit] = number;
      continue;
    }
    switch (flag) {
      case "--host":
        options.host = value;
        break;
      case "--port": {
        const port = Number(value);
        if (!Number.isInteger(port) || port < 0 || port > 65535) {
          return {
            kind: "error",
            message: `--port must be an integer from 0 to 65535, got ${value}`,
          };
        }
        options.port = port;
        break;
      }
      case "--path":
        if (!value.startsWith("/")) {
          return { kind: "error", message: `--path must start with /, got ${value}` };
        }
        options.path = value;
        break;
      case "--event-store":
        if (!/^(memory|kv(:.+)?)$/.test(value)) {
          return {
            kind: "error",
            message: `--event-store must be memory, kv or kv:<path>, got ${value}`,
          };
        }
        options.eventStore = value;
        break;
      case "--session-store":
        if (!/^kv(:.+)?$/.test(value)) {
          return {
            kind: "error",
            message: `--session-store must be kv or kv:<path>, got ${value}`,
          };
        }
        options.sessionStore = value;
        break;
      case "--redis":
        if (!/^rediss?:\/\/./.test(value) || !URL.canParse(value)) {
          return { kind: "error", message: `--redis must be a redis:// or rediss:// URL` };
        }
        options.redis = value;
        break;
      case "--task-store":
        if (!/^(memory|kv(:.+)?)$/.test(value)) {
          return {
            kind: "error",
            message: `--task-store must be memory, kv or kv:<path>, got ${value}`,
          };
        }
        options.taskStore = value;
        break;
      case "--max-tasks":
      case "--max-tasks-per-caller": {
        const number = Number(value);
        if (!Number.isSafeInteger(number) || number < 1) {
          return {
            kind: "error",
            message: `${flag} must be an integer of at least 1, got ${value}`,
          };
        }
        const key = flag === "--max-tasks" ? "maxTasks" : "maxTasksPerCaller";
        (options.taskLimits ??= {})[key] = number;
        break;
      }
      case "--allowed-origin":
        options.allowedOrigins.push(value);
        break;
      case "--allowed-host":
        options.allowedHosts.push(value);
        break;
      case "--auth-issuer":
        options.authIssuer = value;
        break;
      case "--auth-jwks":
        options.authJwks = value;
        break;
      case "--auth-audience":
        options.authAudience = value;
        break;
      case "--auth-scopes":
        (options.authScopes ??= []).push(...value.split(",").map((s) => s.trim()).filter((s) => s));
        break;
      case "--cors":
        options.corsOrigins.push(...value.split(",").map((o) => o.trim()).filter((o) => o));
        break;
      case "--rate-limit":
      case "--rate-limit-burst": {
        const rate = flag === "--rate-limit";
        const number = Number(rate ? value.replace(/\/s$/, "") : value);
        if (!(number > 0) || !Number.isFinite(number) || (!rate && !Number.isSafeInteger(number))) {
          return {
            kind: "error",
            message: rate
              ? `--rate-limit must be a positive rate such as 20/s, got ${value}`
              : `--rate-limit-burst must be a positive integer, got ${value}`,
          };
        }
        (options.rateLimit ??= {})[rate ? "perSecond" : "burst"] = number;
        break;
      }
      case "--trusted-proxy":
        (options.trustedProxies ??= []).push(
          ...value.split(",").map((cidr) => cidr.trim()).filter((cidr) => cidr),
        );
        break;
      case "--log-level":
        if (!/^(debug|info|warn|error|silent)$/.test(value)) {
          return {
            kind: "error",
            message: `--log-level must be debug, info, warn, error or silent, got ${value}`,
          };
        }
        options.logLevel = value as ServeOptions["logLevel"];
        break;
      case "--log-format":
        if (value !== "json" && value !== "pretty") {
          return { kind: "error", message: `--log-format must be json or pretty, got ${value}` };
        }
        options.logFormat = value;
        break;
      case "--request-state-secret":
      case "--request-state-previous-secret": {
        const problem = requestStateSecretProblem(flag, value);
        if (problem) return { kind: "error", message: problem };
        if (flag === "--request-state-secret") options.requestStateSecret = value;
        else options.requestStatePreviousSecret = value;
        break;
      }
    }
  }
  if (!options.module) {
    return { kind: "error", message: "missing server module: serve <server module>" };
  }
  if (
    !options.http &&
    (options.eventStore || options.sessionStore || options.taskStore || options.limits)
  ) {
    return {
      kind: "error",
      message: "--event-store, --session-store, --task-store and the HTTP limits need --http",
    };
  }
  if (options.redis && !options.http) return { kind: "error", message: "--redis needs --http" };
  if (options.redis) {
    // --redis keeps every store on Redis: a KV store flag beside it would split them.
    const replaced = [
      options.eventStore && "--event-store",
      options.sessionStore && "--session-store",
      options.taskStore && "--task-store",
    ].filter(Boolean);
    if (replaced.length > 0) {
      return {
        kind: "error",
        message: `--redis keeps the streams, sessions and tasks on Redis: drop ${
          replaced.join(" and ")
        }`,
      };
    }
  }
  if (options.trustedProxies && !options.http) {
    return { kind: "error", message: "--trusted-proxy needs --http" };
  }
  if (options.taskLimits && !options.http) {
    return { kind: "error", message: "--max-tasks and --max-tasks-per-caller need --http" };
  }
  if (options.rateLimit) {
    if (!options.http) return { kind: "error", message: "--rate-limit needs --http" };
    if (options.rateLimit.perSecond === undefined) {
      return { kind: "error", message: "--rate-limit-burst needs --rate-limit" };
    }
  }
  const auth = [options.authIssuer, options.authJwks, options.authAudience];
  if (auth.some((v) => v !== undefined)) {
    if (!options.http) return { kind: "error", message: "--auth-* flags need --http" };
    if (options.authIssuer === undefined || options.authJwks === undefined) {
      return { kind: "error", message: "--auth-issuer and --auth-jwks go together" };
    }
    for (const url of auth) {
      if (url !== undefined && !URL.canParse(url)) {
        return { kind: "error", message: `--auth-* flags need URLs: ${url}` };
      }
    }
  }
  if (options.authScopes !== undefined) {
    if (options.authIssuer === undefined) {
      return { kind: "error", message: "--auth-scopes needs --auth-issuer and --auth-jwks" };
    }
    // RFC 6749 scope tokens: printable ASCII but space, `"` and `\`.
    const bad = options.authScopes.find((scope) => !/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(scope));
    if (options.authScopes.length === 0 || bad !== undefined) {
      return { kind: "error", message: `--auth-scopes needs scope names: ${bad ?? "none given"}` };
    }
  }
  return { kind: "serve", options };
}

/**
 * What is wrong with a `requestState` secret, if anything: it must be at
 * least 32 characters, so it cannot be guessed offline from a sealed state.
 *
 * @param source Where it came from (a flag or environment variable name).
 * @param secret The secret.
 * @returns The message, or `undefined` when it will do.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { requestStateSecretProblem } from "./_args.ts";
 * assert.match(requestStateSecretProblem("--request-state-secret", "short")!, /32 characters/);
 * assert.equal(requestStateSecretProblem("--request-state-secret", "x".repeat(32)), undefined);
 * ```
 */
export function requestStateSecretProblem(source: string, secret: string): string | undefined {
  return secret.length < 32 ? `${source} must be at least 32 characters` : undefined;
}
