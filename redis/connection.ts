/**
 * Opening a Redis connection for the stores: one URL (`redis://` or
 * `rediss://` for TLS, ACL user and password in it or in the environment),
 * a bounded first connect that fails with a clear {@link RedisUnavailableError},
 * then bounded reconnects while serving, reported as operator events.
 *
 * @module
 */

import { logger } from "@anubis/core";
import { bindClient, clientOf, createClient, type RawRedisClient } from "./_client.ts";

/**
 * One open connection to Redis, as {@link openRedis} returns it: what every
 * Redis store and bus of this package takes. Stores that need a connection of
 * their own (a pub/sub subscriber) open it with {@link RedisConnection.duplicate}.
 *
 * @example
 * ```ts
 * import type { RedisConnection } from "@anubis/redis";
 * import assert from "node:assert/strict";
 * const describe = (redis: RedisConnection | undefined) => redis ? redis.url : "none";
 * assert.equal(describe(undefined), "none");
 * ```
 */
export class RedisConnection {
  /**
   * The URL connected to, its password replaced by `***`.
   *
   * @example
   * ```ts
   * import { openRedis } from "@anubis/redis";
   * import assert from "node:assert/strict";
   * const redis = await openRedis("redis://127.0.0.1:1").catch(() => undefined);
   * assert.equal(redis?.url, undefined); // nothing listens on port 1
   * ```
   */
  readonly url: string;
  readonly #rawUrl: string;
  readonly #options: RedisConnectOptions;

  /** Made by {@link openRedis}. */
  private constructor(url: string, options: RedisConnectOptions, client: RawRedisClient) {
    this.url = redactRedisUrl(url);
    this.#rawUrl = url;
    this.#options = options;
    bindClient(this, client);
  }

  /** @internal */
  static wrap(url: string, options: RedisConnectOptions, client: RawRedisClient): RedisConnection {
    return new RedisConnection(url, options, client);
  }

  /**
   * Round trip to the server: `"PONG"`.
   *
   * @example
   * ```ts
   * import { openRedis } from "@anubis/redis";
   * import assert from "node:assert/strict";
   * const redis = await openRedis("redis://127.0.0.1:1").catch(() => undefined);
   * assert.equal(await redis?.ping(), undefined);
   * ```
   */
  ping(): Promise<string> {
    return clientOf(this).ping();
  }

  /**
   * Opens another connection to the same server with the same options (a
   * subscriber needs one of its own).
   *
   * @example
   * ```ts
   * import { openRedis } from "@anubis/redis";
   * import assert from "node:assert/strict";
   * const redis = await openRedis("redis://127.0.0.1:1").catch(() => undefined);
   * assert.equal(redis && typeof redis.duplicate, undefined);
   * ```
   */
  duplicate(): Promise<RedisConnection> {
    return openRedis(this.#rawUrl, this.#options);
  }

  /**
   * Closes the connection at once (pending commands are rejected).
   *
   * @example
   * ```ts
   * import { openRedis } from "@anubis/redis";
   * import assert from "node:assert/strict";
   * const redis = await openRedis("redis://127.0.0.1:1").catch(() => undefined);
   * redis?.close();
   * assert.equal(redis, undefined);
   * ```
   */
  close(): void {
    const client = clientOf(this);
    if (client.isOpen) client.destroy();
  }
}

/**
 * Options of {@link openRedis}.
 *
 * @example
 * ```ts
 * import type { RedisConnectOptions } from "@anubis/redis";
 * import assert from "node:assert/strict";
 * const options: RedisConnectOptions = { connectTimeoutMs: 2_000, name: "anubis-events" };
 * assert.equal(options.connectTimeoutMs, 2000);
 * ```
 */
export interface RedisConnectOptions {
  /** How long the first connection (and each reconnect's socket) may take (default 5,000 ms). */
  connectTimeoutMs?: number;
  /** The longest wait between two reconnect attempts while serving (default 2,000 ms). */
  maxReconnectDelayMs?: number;
  /** `CLIENT SETNAME` of the connection, seen in `CLIENT LIST` (default `"anubis"`). */
  name?: string;
  /**
   * ACL user and password when the URL carries none (default: the
   * `REDIS_USERNAME` and `REDIS_PASSWORD` environment variables, when
   * readable).
   */
  username?: string;
  /** See {@link RedisConnectOptions.username}. */
  password?: string;
}

/**
 * Why a Redis connection could not be opened at start: the URL (without its
 * password) and the client's reason.
 *
 * @example
 * ```ts
 * import { RedisUnavailableError } from "@anubis/redis";
 * import assert from "node:assert/strict";
 * const error = new RedisUnavailableError("redis://127.0.0.1:1", "connection refused");
 * assert.match(error.message, /redis:\/\/127\.0\.0\.1:1/);
 * ```
 */
export class RedisUnavailableError extends Error {
  /**
   * The URL, its password replaced by `***`.
   *
   * @example
   * ```ts
   * import { RedisUnavailableError } from "@anubis/redis";
   * import assert from "node:assert/strict";
   * const error = new RedisUnavailableError("redis://u:pw@127.0.0.1:1", "refused");
   * assert.equal(error.url, "redis://u:***@127.0.0.1:1");
   * ```
   */
  readonly url: string;

  /**
   * Made by {@link openRedis}; `url` is shown without its password.
   *
   * @param url The URL as the operator gave it (its password is hidden).
   * @param reason What the client reported.
   */
  constructor(url: string, reason: string) {
    const shown = redactRedisUrl(url);
    super(`Redis at ${shown} is unreachable: ${reason}`);
    this.name = "RedisUnavailableError";
    this.url = shown;
  }
}

/**
 * A Redis URL fit for logs: its password replaced by `***`.
 *
 * @example
 * ```ts
 * import { redactRedisUrl } from "@anubis/redis";
 * import assert from "node:assert/strict";
 * assert.equal(redactRedisUrl("rediss://app:s3cret@cache:6380/0"), "rediss://app:***@cache:6380/0");
 * assert.equal(redactRedisUrl("redis://127.0.0.1:6379"), "redis://127.0.0.1:6379");
 * ```
 */
export function redactRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString().replace(/\/$/, "");
  } catch {
    return "<unparsable Redis URL>";
  }
}

function env(name: string): string | undefined {
  try {
    return (globalThis as { Deno?: { env: { get(name: string): string | undefined } } }).Deno?.env
      .get(name) ??
      (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env[name];
  } catch {
    return undefined; // no --allow-env: the URL is all there is
  }
}

/**
 * Opens and connects a Redis client for the stores. The first connection is
 * bounded by `connectTimeoutMs` and fails with {@link RedisUnavailableError}
 * (nothing retries it: a server that cannot reach its store at start should
 * exit and say why). Once connected, a dropped connection is retried with
 * backoff up to `maxReconnectDelayMs` between attempts, for as long as it
 * takes; `redis.unavailable` and `redis.recovered` operator events say when.
 *
 * @param url `redis://[user:password@]host:port[/db]`, or `rediss://` for TLS.
 * @param options Timeouts, connection name, ACL credentials.
 * @returns The open connection; `close()` it when done.
 *
 * @example
 * ```ts
 * import { openRedis, RedisUnavailableError } from "@anubis/redis";
 * import assert from "node:assert/strict";
 * // Nothing listens on port 1: the first connect fails at once with the reason.
 * await assert.rejects(
 *   openRedis("redis://127.0.0.1:1", { connectTimeoutMs: 1_000 }),
 *   RedisUnavailableError,
 * );
 * ```
 */
export async function openRedis(
  url: string,
  options: RedisConnectOptions = {},
): Promise<RedisConnection> {
  const connectTimeout = options.connectTimeoutMs ?? 5_000;
  const maxDelay = options.maxReconnectDelayMs ?? 2_000;
  const parsed = URL.canParse(url) ? new URL(url) : undefined;
  if (!parsed || (parsed.protocol !== "redis:" && parsed.protocol !== "rediss:")) {
    throw new RedisUnavailableError(url, "the URL must start with redis:// or rediss://");
  }
  let connected = false;
  let down = false;
  const client = createClient({
    url,
    name: options.name ?? "anubis",
    username: parsed.username ? undefined : options.username ?? env("REDIS_USERNAME"),
    password: parsed.password ? undefined : options.password ?? env("REDIS_PASSWORD"),
    socket: {
      connectTimeout,
      // At start: no retry (openRedis reports the failure). Serving: retry for ever, bounded delay.
      reconnectStrategy: (retries: number) =>
        connected ? Math.min(50 * 2 ** retries, maxDelay) : false,
    },
  });
  client.on("error", (error: unknown) => {
    if (!connected || down) return;
    down = true;
    logger.warn("redis.unavailable", "Redis connection lost; reconnecting", {
      url: redactRedisUrl(url),
      error,
    });
  });
  client.on("ready", () => {
    if (!down) return;
    down = false;
    logger.info("redis.recovered", "Redis connection back", { url: redactRedisUrl(url) });
  });
  try {
    await client.connect();
  } catch (error) {
    client.destroy();
    throw new RedisUnavailableError(url, error instanceof Error ? error.message : String(error));
  }
  connected = true;
  return RedisConnection.wrap(url, options, client as RawRedisClient);
}
