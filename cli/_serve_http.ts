/**
 * `serve --http`: the server on Streamable HTTP until the signal aborts,
 * with the stores the flags name.
 *
 * @module
 */

import {
  type EventStore,
  type McpServer,
  MemoryTaskStore,
  type NotificationBus,
  type RateLimitStore,
  type SessionStore,
  type TaskStore,
} from "@anubis/core";
import { logger } from "@anubis/core";
import {
  DEFAULT_KV_PATH,
  isKvConnectUrl,
  isKvFilePath,
  KvFileWatch,
  type KvLike,
  SharedRequestStateKeys,
} from "@anubis/core/kv";
import {
  KvEventStore,
  KvNotificationBus,
  openKvPath,
  StoredStreamsBus,
} from "@anubis/event-store-kv";
import { KvRateLimitStore, KvSessionStore, KvTaskStore } from "@anubis/session-kv";
import {
  type AuthOptions,
  isLoopbackHost,
  jwtVerifier,
  type RateLimitOptions,
  serve,
  type SessionBusMessage,
} from "@anubis/transport-http";
import { requestStateSecretProblem, type ServeOptions } from "./_args.ts";
import { MemoryEventStore } from "@anubis/event-store-memory";

/** Rethrows a failure to open or first read a KV database as the CLI reports it. */
function cannotOpen(error: unknown): never {
  throw new Error(`cannot open the KV store: ${(error as Error).message}`);
}

/**
 * The warning `serve --http` prints when its bind address turns the `Host`
 * check off: on a non-loopback bind without `--allowed-host`, any `Host` is
 * accepted, which leaves DNS rebinding to the network in front of the server.
 *
 * @param options The bind address and the extra allowed hosts.
 * @returns The one-line warning, or `undefined` when the check is on.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { hostCheckWarning } from "./_serve_http.ts";
 * assert.match(hostCheckWarning({ host: "0.0.0.0", allowedHosts: [] })!, /--allowed-host/);
 * assert.equal(hostCheckWarning({ host: "0.0.0.0", allowedHosts: ["mcp.example.com"] }), undefined);
 * assert.equal(hostCheckWarning({ host: "127.0.0.1", allowedHosts: [] }), undefined);
 * ```
 */
export function hostCheckWarning(
  options: Pick<ServeOptions, "host" | "allowedHosts">,
): string | undefined {
  if (isLoopbackHost(options.host) || options.allowedHosts.length > 0) return undefined;
  return `anubis: warning: --host ${options.host} is not a loopback address, so the Host check ` +
    `(DNS-rebinding protection) is off and any Host is accepted; name the hosts clients use ` +
    `with --allowed-host <host> (repeatable) to turn it on`;
}

/**
 * The warning `serve --http` prints when a non-loopback bind has turned both
 * connection timeouts off (`--header-timeout 0 --idle-timeout 0`): the server
 * then holds a connection that sends nothing, half a header, or stays idle,
 * until its client closes it, so clients that merely hold sockets can use up
 * the process's descriptors.
 *
 * @param options The bind address and the timeout flags.
 * @returns The one-line warning, or `undefined` (loopback, or a timeout on).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { timeoutsWarning } from "./_serve_http.ts";
 * const off = { headersTimeoutMs: 0, idleTimeoutMs: 0 };
 * assert.match(timeoutsWarning({ host: "0.0.0.0", limits: off })!, /--idle-timeout/);
 * assert.equal(timeoutsWarning({ host: "0.0.0.0" }), undefined);
 * assert.equal(timeoutsWarning({ host: "0.0.0.0", limits: { headersTimeoutMs: 0 } }), undefined);
 * assert.equal(timeoutsWarning({ host: "127.0.0.1", limits: off }), undefined);
 * ```
 */
export function timeoutsWarning(
  options: Pick<ServeOptions, "host" | "limits">,
): string | undefined {
  if (isLoopbackHost(options.host)) return undefined;
  if (options.limits?.headersTimeoutMs !== 0 || options.limits?.idleTimeoutMs !== 0) {
    return undefined;
  }
  return `anubis: warning: --host ${options.host} is not a loopback address and connections ` +
    `have no header or idle timeout (both turned off); drop --header-timeout 0 and ` +
    `--idle-timeout 0 or put a proxy with such timeouts in front`;
}

/**
 * The warning for a KV file that exists but is empty (0 bytes): Deno KV then
 * starts a new database in it, so sessions and events it held, if it was
 * truncated, are gone. A file that does not exist yet is a first start and
 * gets no warning.
 *
 * @param path The KV path (files only; `:memory:` and URLs get none).
 * @returns The one-line warning, or `undefined`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { emptyKvWarning } from "./_serve_http.ts";
 * const path = await Deno.makeTempFile();
 * assert.match((await emptyKvWarning(path))!, /is empty/);
 * await Deno.writeTextFile(path, "x");
 * assert.equal(await emptyKvWarning(path), undefined);
 * assert.equal(await emptyKvWarning(":memory:"), undefined);
 * await Deno.remove(path);
 * ```
 */
export async function emptyKvWarning(path: string): Promise<string | undefined> {
  if (!isKvFilePath(path)) return undefined;
  const size = await Deno.stat(path).then((info) => info.size, () => undefined);
  if (size !== 0) return undefined;
  return `anubis: warning: the KV file ${path} is empty (0 bytes), so the stores start with no ` +
    `sessions or events; if it held data, it was truncated`;
}

/**
 * The KV databases of one `serve`, one handle per path: the event store, the
 * session store and the buses on one file share it instead of each opening
 * their own. A file found empty gets {@link emptyKvWarning} on stderr.
 *
 * @example
 * ```ts
 * import { KvDatabases } from "./_serve_http.ts";
 * import assert from "node:assert/strict";
 * const databases = new KvDatabases();
 * const kv = await databases.open(":memory:");
 * assert.equal(kv === await databases.open(":memory:"), true);
 * databases.close();
 * ```
 */
export class KvDatabases {
  readonly #opening = new Map<string, Promise<KvLike>>();
  readonly #opened: KvLike[] = [];
  readonly #watches = new Map<string, KvFileWatch>();

  /**
   * The database at `path`, opened on first use (a file's folder created; a
   * KV Connect URL passed to `Deno.openKv` as it is, with the access token
   * Deno reads from `DENO_KV_ACCESS_TOKEN`, which must be set).
   *
   * @param path A file, `":memory:"` or a KV Connect URL.
   * @returns The handle every caller with this path shares.
   * @throws {Error} When it cannot be opened (`cannot open the KV store: …`).
   *
   * @example
   * ```ts
   * import { KvDatabases } from "./_serve_http.ts";
   * import assert from "node:assert/strict";
   * const databases = new KvDatabases();
   * const kv = await databases.open(":memory:");
   * assert.equal((await kv.get(["k"])).value, null);
   * databases.close();
   * ```
   */
  open(path: string): Promise<KvLike> {
    let kv = this.#opening.get(path);
    if (!kv) {
      kv = emptyKvWarning(path).then((warning) => {
        if (warning) logger.warn("kv.empty", warning.replace(/^anubis: /, ""), { path });
        if (isKvConnectUrl(path) && !Deno.env.get("DENO_KV_ACCESS_TOKEN")) {
          throw new Error(
            `${path} is a KV Connect URL: set DENO_KV_ACCESS_TOKEN to the database's access token`,
          );
        }
        return openKvPath(path);
      }).then(async (opened) => {
        this.#opened.push(opened);
        if (isKvFilePath(path)) {
          // A file read-only at start fails here, not on every write later.
          const watch = await KvFileWatch.start(path);
          this.#watches.set(path, watch);
          if (watch.problem !== undefined) throw new Error(watch.problem);
        }
        return opened;
      }).catch(cannotOpen);
      this.#opening.set(path, kv);
    }
    return kv;
  }

  /**
   * Closes every database opened; close their users (stores, buses) first.
   *
   * @example
   * ```ts
   * import { KvDatabases } from "./_serve_http.ts";
   * const databases = new KvDatabases();
   * await databases.open(":memory:");
   * databases.close();
   * ```
   */
  close(): void {
    for (const watch of this.#watches.values()) watch.close();
    this.#watches.clear();
    for (const kv of this.#opened.splice(0)) kv.close();
    this.#opening.clear();
  }

  /**
   * The watch of a KV file opened here (removed, replaced or read-only while
   * serving: see `KvFileWatch`); `undefined` for `:memory:` and URLs.
   *
   * @param path The path given to {@link open}.
   * @returns The watch.
   *
   * @example
   * ```ts
   * import { KvDatabases } from "./_serve_http.ts";
   * import assert from "node:assert/strict";
   * const databases = new KvDatabases();
   * await databases.open(":memory:");
   * assert.equal(databases.watch(":memory:"), undefined);
   * databases.close();
   * ```
   */
  watch(path: string): KvFileWatch | undefined {
    return this.#watches.get(path);
  }

  /**
   * What is wrong with any KV file opened here, as last checked, or
   * `undefined`: what readiness reports.
   *
   * @returns The first problem.
   *
   * @example
   * ```ts
   * import { KvDatabases } from "./_serve_http.ts";
   * import assert from "node:assert/strict";
   * const databases = new KvDatabases();
   * await databases.open(":memory:");
   * assert.equal(databases.problem(), undefined);
   * databases.close();
   * ```
   */
  problem(): string | undefined {
    for (const watch of this.#watches.values()) {
      if (watch.problem !== undefined) return watch.problem;
    }
    return undefined;
  }
}

/**
 * The stores `--event-store` and `--session-store` name, opened.
 *
 * @example
 * ```ts
 * import type { OpenedStores } from "./_serve_http.ts";
 * const none: OpenedStores = { close() {} };
 * ```
 */
export interface OpenedStores {
  /** The event store. */
  eventStore?: EventStore;
  /** The session store. */
  sessionStore?: SessionStore;
  /** The task store (`--task-store kv[:PATH]`; memory otherwise). */
  taskStore?: TaskStore;
  /** Closes what was opened (KV databases, unless they were handed in). */
  close(): void;
}

/** The KV path of a `kv` or `kv:PATH` flag value, or `undefined` for another store. */
function kvPath(flag: string | undefined): string | undefined {
  if (flag === "kv") return DEFAULT_KV_PATH;
  return flag?.startsWith("kv:") ? flag.slice("kv:".length) : undefined;
}

/**
 * Opens the stores the flags name: `--event-store memory` is the in-process
 * store, `kv[:PATH]` a Deno KV database (default `.data/anubis.kv`) for
 * either store. Stores on one path share one handle.
 *
 * @param options The command-line options.
 * @param databases Where to open KV databases (default: its own, closed by
 *   `close()`; handed in, the caller closes them).
 * @returns The stores.
 * @throws {Error} When a database cannot be opened.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemoryEventStore } from "@anubis/event-store-memory";
 * import { openStores } from "./_serve_http.ts";
 * const stores = await openStores({ eventStore: "memory" });
 * assert.ok(stores.eventStore instanceof MemoryEventStore);
 * stores.close();
 * ```
 */
export async function openStores(
  options: Pick<ServeOptions, "eventStore" | "sessionStore" | "taskStore" | "taskLimits">,
  databases?: KvDatabases,
): Promise<OpenedStores> {
  const owned = databases ? undefined : new KvDatabases();
  const kvs = databases ?? owned!;
  const stores: OpenedStores = { close: () => owned?.close() };
  try {
    const eventPath = kvPath(options.eventStore);
    if (options.eventStore === "memory") stores.eventStore = new MemoryEventStore();
    else if (eventPath !== undefined) {
      stores.eventStore = new KvEventStore(await kvs.open(eventPath), {
        watch: isKvConnectUrl(eventPath),
      });
    }
    const sessionPath = kvPath(options.sessionStore);
    if (sessionPath !== undefined) {
      const kv = await kvs.open(sessionPath);
      stores.sessionStore = new KvSessionStore(kv, { file: kvs.watch(sessionPath) });
    }
    const taskPath = kvPath(options.taskStore);
    const limits = options.taskLimits;
    if (taskPath !== undefined) {
      stores.taskStore = new KvTaskStore(await kvs.open(taskPath), limits);
    } else if (limits) stores.taskStore = new MemoryTaskStore(limits);
  } catch (error) {
    stores.close();
    throw error;
  }
  return stores;
}

/**
 * The instances joined by {@link joinInstances}.
 *
 * @example
 * ```ts
 * import type { JoinedInstances } from "./_serve_http.ts";
 * const alone: JoinedInstances = { leave: () => Promise.resolve() };
 * ```
 */
export interface JoinedInstances {
  /** The bus the HTTP handlers of the instances share (with a KV session store only). */
  sessionBus?: NotificationBus<SessionBusMessage>;
  /** Disconnects and closes the buses (and the databases, unless handed in). */
  leave(): Promise<void>;
}

/**
 * Joins the other instances on the same KV database:
 *
 * - with either store on KV, the server's notifier joins a KV notification
 *   bus (the channel named after the server, on the event store's database,
 *   else the session store's), so a change raised on any instance reaches
 *   every instance's listen streams and sessions;
 * - with `--session-store kv[:PATH]`, the HTTP handlers join a session bus
 *   (the channel `<name>/sessions`, on the session store's database): a
 *   client's answer to a server-to-client request reaches the instance that
 *   asked, and a GET stream opened at one instance closes the session's older
 *   one at the others. Only a shared session store lets a session be served
 *   by several instances, so without one there is nothing to tell;
 * - with both stores on KV (handed in as `stores`), a change raised here is
 *   first appended to the stored stream of every stored session this
 *   instance did not serve itself (`StoredStreamsBus`), so it reaches a
 *   session whose only stream was on an instance that died.
 *
 * @param server The server.
 * @param options The command-line options.
 * @param databases Where to open KV databases (default: its own, closed by
 *   `leave()`; handed in, the caller closes them).
 * @param stores The stores the HTTP handler uses ({@link openStores}).
 * @returns The session bus, and what leaves (nothing to do without KV).
 * @throws {Error} When the database cannot be opened.
 *
 * @example
 * ```ts
 * import { defineServer } from "@anubis/core";
 * import { joinInstances } from "./_serve_http.ts";
 * import assert from "node:assert/strict";
 * const joined = await joinInstances(defineServer({ name: "s", version: "1" }), {
 *   sessionStore: "kv::memory:",
 * });
 * assert.equal(joined.sessionBus !== undefined, true);
 * await joined.leave();
 * ```
 */
export async function joinInstances(
  server: McpServer,
  options: Pick<ServeOptions, "eventStore" | "sessionStore">,
  databases?: KvDatabases,
  stores?: Pick<OpenedStores, "eventStore" | "sessionStore">,
): Promise<JoinedInstances> {
  const sessionPath = kvPath(options.sessionStore);
  const changesPath = kvPath(options.eventStore) ?? sessionPath;
  if (changesPath === undefined) return { leave: () => Promise.resolve() };
  const owned = databases ? undefined : new KvDatabases();
  const kvs = databases ?? owned!;
  const buses: { close(): Promise<void> }[] = [];
  const leaveBuses = async () => {
    for (const bus of buses.splice(0)) await bus.close();
    owned?.close();
  };
  try {
    const changes = new KvNotificationBus(await kvs.open(changesPath), {
      channel: server.info.name,
      watch: isKvConnectUrl(changesPath),
    });
    buses.push(changes);
    await changes.start().catch(cannotOpen);
    let sessions: KvNotificationBus<SessionBusMessage> | undefined;
    if (sessionPath !== undefined) {
      sessions = new KvNotificationBus<SessionBusMessage>(await kvs.open(sessionPath), {
        channel: `${server.info.name}/sessions`,
        watch: isKvConnectUrl(sessionPath),
      });
      buses.push(sessions);
      await sessions.start().catch(cannotOpen);
    }
    const recording = recordingBus(server, changes, stores);
    const disconnect = server.notify.connect(recording ?? changes);
    return {
      sessionBus: sessions,
      async leave() {
        disconnect();
        await recording?.idle();
        await leaveBuses();
      },
    };
  } catch (error) {
    await leaveBuses();
    throw error;
  }
}

/**
 * The environment variable that gives the `requestState` secret.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { REQUEST_STATE_SECRET_ENV } from "./_serve_http.ts";
 * assert.equal(REQUEST_STATE_SECRET_ENV, "ANUBIS_REQUEST_STATE_SECRET");
 * ```
 */
export const REQUEST_STATE_SECRET_ENV = "ANUBIS_REQUEST_STATE_SECRET";
/**
 * The environment variable that gives a rotated-out `requestState` secret.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { REQUEST_STATE_PREVIOUS_SECRET_ENV } from "./_serve_http.ts";
 * assert.equal(REQUEST_STATE_PREVIOUS_SECRET_ENV, "ANUBIS_REQUEST_STATE_PREVIOUS_SECRET");
 * ```
 */
export const REQUEST_STATE_PREVIOUS_SECRET_ENV = "ANUBIS_REQUEST_STATE_PREVIOUS_SECRET";

/**
 * Where the server's `requestState` key comes from, first match wins:
 *
 * 1. `--request-state-secret` (or {@link REQUEST_STATE_SECRET_ENV}), with
 *    `--request-state-previous-secret` (or
 *    {@link REQUEST_STATE_PREVIOUS_SECRET_ENV}) still accepted: for
 *    deployments without a shared KV store, and for manual rotation;
 * 2. the server module's own `requestState.secret`;
 * 3. with either store on KV, the key shared through that database
 *    ({@link SharedRequestStateKeys}: created once, rotated weekly, the
 *    previous key accepted for 15 minutes), so instances on one store
 *    answer each other's rounds with nothing to configure;
 * 4. else the process's random key (one instance).
 *
 * @param server The server (its codec is switched to the chosen keys).
 * @param options The command-line options.
 * @param databases Where the KV stores are opened.
 * @param env Reads the environment (default `Deno.env.get`).
 * @returns Stops refreshing the shared keys (nothing to stop otherwise).
 * @throws {Error} When a secret is too short or the shared key cannot be read.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { defineServer } from "@anubis/core";
 * import { KvDatabases, useRequestStateKeys } from "./_serve_http.ts";
 * const server = defineServer({ name: "s", version: "1" });
 * const databases = new KvDatabases();
 * const stop = await useRequestStateKeys(server, { sessionStore: "kv::memory:" }, databases);
 * assert.equal(server.requestState.hasSecret, true);
 * stop();
 * databases.close();
 * ```
 */
export async function useRequestStateKeys(
  server: McpServer,
  options: Pick<
    ServeOptions,
    "eventStore" | "sessionStore" | "requestStateSecret" | "requestStatePreviousSecret"
  >,
  databases: KvDatabases,
  env: (name: string) => string | undefined = (name) => Deno.env.get(name),
): Promise<() => void> {
  const secret = options.requestStateSecret ?? env(REQUEST_STATE_SECRET_ENV);
  const previous = options.requestStatePreviousSecret ?? env(REQUEST_STATE_PREVIOUS_SECRET_ENV);
  if (secret !== undefined) {
    // The flags were checked when parsed; this also covers the environment.
    const problem = requestStateSecretProblem(REQUEST_STATE_SECRET_ENV, secret) ??
      (previous === undefined
        ? undefined
        : requestStateSecretProblem(REQUEST_STATE_PREVIOUS_SECRET_ENV, previous));
    if (problem) throw new Error(problem);
    await server.requestState.useKeys({ secret, previousSecrets: previous ? [previous] : [] });
    return () => {};
  }
  const path = kvPath(options.sessionStore) ?? kvPath(options.eventStore);
  if (server.requestState.hasSecret || path === undefined) return () => {};
  const keys = new SharedRequestStateKeys(await databases.open(path));
  return await keys.attach(server.requestState).catch(cannotOpen);
}

/** With a KV event store and a KV session store, the bus that records changes in stored streams. */
function recordingBus(
  server: McpServer,
  changes: KvNotificationBus,
  stores: Pick<OpenedStores, "eventStore" | "sessionStore"> | undefined,
): StoredStreamsBus | undefined {
  const { eventStore, sessionStore } = stores ?? {};
  if (!(eventStore instanceof KvEventStore) || !(sessionStore instanceof KvSessionStore)) {
    return undefined;
  }
  return new StoredStreamsBus(changes, {
    eventStore,
    sessions: () => sessionStore.records(),
    capabilities: server.capabilities,
  });
}

/**
 * Serves over Streamable HTTP and prints one line with the endpoint URL on
 * stderr (`anubis: listening on http://127.0.0.1:8080/mcp`). With KV stores
 * it joins the other instances on the database ({@link joinInstances}); the
 * stores and buses on one path share one KV handle.
 *
 * @param server The server.
 * @param options The command-line options.
 * @param signal Stops serving.
 * @returns Resolves once the server stopped and the stores are closed.
 *
 * @example
 * ```ts ignore
 * import { serveHttp } from "./_serve_http.ts";
 * ```
 */
export async function serveHttp(
  server: McpServer,
  options: ServeOptions,
  signal: AbortSignal,
): Promise<void> {
  const warning = hostCheckWarning(options);
  if (warning) {
    logger.warn("host.unchecked", warning.replace(/^anubis: /, ""), { host: options.host });
  }
  const timeouts = timeoutsWarning(options);
  if (timeouts) {
    logger.warn("timeouts.off", timeouts.replace(/^anubis: /, ""), { host: options.host });
  }
  const databases = new KvDatabases();
  let joined: JoinedInstances | undefined;
  let stopKeys = () => {};
  let redis: import("./_redis.ts").RedisServing | undefined;
  try {
    // --redis: every Redis store and bus comes from cli/_redis.ts (loaded only then).
    // It replaces every KV store flag (the parser refuses them together).
    if (options.redis) {
      redis = await (await import("./_redis.ts")).openRedisStores(options.redis, server, {
        taskLimits: options.taskLimits,
        rateLimit: options.rateLimit?.perSecond !== undefined,
      });
    }
    const stores = redis ? { ...redis.stores } : await openStores(options, databases);
    stopKeys = await useRequestStateKeys(server, options, databases);
    if (redis && !server.requestState.hasSecret) await redis.useRequestStateKeys();
    joined = redis
      ? redis.join(stores.sessionStore)
      : await joinInstances(server, options, databases, stores);
    // --header-timeout and --idle-timeout come in `limits` (serve() has both on by default).
    const running = serve(server, {
      hostname: options.host,
      port: options.port,
      path: options.path,
      readiness: { check: () => databases.problem() ?? redis?.problem() },
      eventStore: stores.eventStore,
      sessionStore: stores.sessionStore,
      taskStore: stores.taskStore,
      sessionBus: joined.sessionBus,
      allowedOrigins: options.allowedOrigins,
      allowedHosts: options.allowedHosts.length > 0 ? options.allowedHosts : undefined,
      ...options.limits,
      cors: options.corsOrigins.length > 0 ? { origins: options.corsOrigins } : undefined,
      auth: authOf(options),
      rateLimit: await rateLimitOf(options, databases, redis?.stores.rateLimitStore),
      trustedProxies: options.trustedProxies,
      signal,
      onListen: (url) =>
        logger.info("listening", `listening on ${url.href}`, { url: url.href, transport: "http" }),
    });
    await running.finished;
  } finally {
    stopKeys();
    await joined?.leave();
    await redis?.close();
    databases.close();
  }
}

/**
 * The `rateLimit` option of `--rate-limit` and `--rate-limit-burst`, if
 * given: burst twice the rate by default, the buckets in `shared` when given
 * (Redis, with `--redis`), else shared through the KV database of the
 * session (else event) store when one is on KV.
 *
 * @param options The command-line options.
 * @param databases Where the KV database is opened.
 * @param shared A store shared by every instance, used as it is.
 * @returns The option, or `undefined` (no limit).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { KvDatabases, rateLimitOf } from "./_serve_http.ts";
 * const databases = new KvDatabases();
 * const memory = await rateLimitOf({ rateLimit: { perSecond: 5 } }, databases);
 * assert.deepEqual(memory, { perSecond: 5, burst: 10, store: undefined });
 * const shared = await rateLimitOf(
 *   { rateLimit: { perSecond: 5, burst: 1 }, sessionStore: "kv::memory:" },
 *   databases,
 * );
 * assert.equal(shared?.burst, 1);
 * assert.ok(shared?.store);
 * databases.close();
 * ```
 */
export async function rateLimitOf(
  options: Pick<ServeOptions, "rateLimit" | "eventStore" | "sessionStore">,
  databases: KvDatabases,
  shared?: RateLimitStore,
): Promise<RateLimitOptions | undefined> {
  const perSecond = options.rateLimit?.perSecond;
  if (perSecond === undefined) return undefined;
  const path = kvPath(options.sessionStore) ?? kvPath(options.eventStore);
  return {
    perSecond,
    burst: options.rateLimit?.burst ?? Math.max(1, Math.round(2 * perSecond)),
    store: shared ??
      (path === undefined
        ? undefined
        : new KvRateLimitStore(await databases.open(path).catch(cannotOpen))),
  };
}

/**
 * The `auth` option of the `--auth-*` flags, if given. Without
 * `--auth-audience`, `serve()` fixes the audience to the URL it listens on
 * (never a request's `Host`); on a non-loopback bind that is rarely the URL
 * clients use, so it says so.
 */
function authOf(options: ServeOptions): AuthOptions | undefined {
  if (options.authIssuer === undefined || options.authJwks === undefined) return undefined;
  if (options.authAudience === undefined && !isLoopbackHost(options.host)) {
    logger.warn(
      "auth.audience",
      `--host ${options.host} with no --auth-audience: tokens must carry the listening URL ` +
        `(http://${options.host}:<port>${options.path}) as audience; ` +
        `set --auth-audience to the URL clients use`,
      { host: options.host },
    );
  }
  return {
    verifyToken: jwtVerifier({
      issuer: options.authIssuer,
      jwksUrl: options.authJwks,
      audience: options.authAudience,
    }),
    resource: options.authAudience,
    authorizationServers: [options.authIssuer],
    requiredScopes: options.authScopes,
  };
}
