/**
 * The input a running task of the tasks extension waits for: each request
 * its handler makes (`frame.elicit()`, `frame.sample()`, `frame.listRoots()`)
 * is stored in the task (`input_required`, `inputRequests`) under a key
 * unique for the task's life, and settled once `tasks/update` stored its
 * answer, on whichever instance it arrived.
 *
 * @module
 */

import { ErrorCode, McpError } from "../errors.ts";
import { KEY_PREFIX } from "../frame.ts";
import { logger } from "../logger.ts";
import { isTerminal, type TaskPatch, type TaskRecord, type TaskStore } from "../task_store.ts";
import type { JsonObject } from "../types.ts";

/** How often a task waiting for input looks for answers another instance stored. */
const INPUT_POLL_MS = 200;

type Result = Record<string, unknown>;

/**
 * The input a running task waits for: each request the handler makes is
 * stored under a key unique for the task's life (`input_required`), and
 * settled when `tasks/update` stored its answer (on any instance).
 */
export class TaskInputs {
  readonly #store: TaskStore;
  readonly #id: string;
  readonly #pending = new Map<
    string,
    { request: Result; resolve(answer: unknown): void; reject(error: unknown): void }
  >();
  readonly #changed: (record: TaskRecord | undefined) => void;
  #count = 0;
  #writes: Promise<unknown> = Promise.resolve();
  #wake: (() => void) | undefined;
  #polling = false;

  constructor(store: TaskStore, id: string, changed: (record: TaskRecord | undefined) => void) {
    this.#store = store;
    this.#id = id;
    this.#changed = changed;
  }

  /** Asks the client through the task; resolves with its answer. */
  ask(method: string, params: Record<string, unknown>, signal: AbortSignal): Promise<unknown> {
    const key = `${KEY_PREFIX[method] ?? "input"}_${++this.#count}`;
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason);
      const abort = () => {
        this.#pending.delete(key);
        reject(signal.reason);
      };
      signal.addEventListener("abort", abort, { once: true });
      this.#pending.set(key, {
        request: { method, params },
        resolve: (answer) => {
          signal.removeEventListener("abort", abort);
          resolve(answer);
        },
        reject,
      });
      this.#write({ status: "input_required", inputRequests: this.#requests(), inputKeys: [key] });
      this.#poll();
    });
  }

  /** Looks for answers now (`tasks/update` reached this instance). */
  wake(): void {
    this.#wake?.();
  }

  #requests(): JsonObject {
    const requests: JsonObject = {};
    for (const [key, { request }] of this.#pending) requests[key] = request as JsonObject;
    return requests;
  }

  /** The task's writes, in order. */
  #write(patch: TaskPatch): Promise<unknown> {
    this.#writes = this.#writes.then(() => this.#store.update(this.#id, patch)).then(
      this.#changed,
      (error) =>
        logger.error("store.failed", `task ${this.#id} was not updated`, {
          taskId: this.#id,
          error,
        }),
    );
    return this.#writes;
  }

  /** Waits for answers while any request is outstanding. */
  async #poll(): Promise<void> {
    if (this.#polling) return;
    this.#polling = true;
    try {
      while (this.#pending.size) {
        await new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            this.#wake = undefined;
            resolve();
          };
          const timer = setTimeout(done, INPUT_POLL_MS);
          this.#wake = done;
        });
        await this.#writes;
        // A store that failed to answer is asked again on the next round.
        const record = await this.#store.get(this.#id).catch(() => null);
        if (record === null) continue;
        if (!record || isTerminal(record.status)) {
          // Ended meanwhile (cancelled, expired): the handler's wait ends with it.
          const ended = new McpError(ErrorCode.INTERNAL_ERROR, "The task ended");
          for (const { reject } of this.#pending.values()) reject(ended);
          this.#pending.clear();
          return;
        }
        const consumed: Record<string, null> = {};
        for (const [key, waiter] of this.#pending) {
          const answer = record.inputResponses?.[key];
          if (answer === undefined) continue;
          consumed[key] = null;
          this.#pending.delete(key);
          waiter.resolve(answer);
        }
        if (!Object.keys(consumed).length) continue;
        const waiting = this.#pending.size > 0;
        this.#write({
          inputResponses: consumed,
          inputRequests: waiting ? this.#requests() : null,
          status: waiting ? "input_required" : "working",
        });
      }
    } finally {
      this.#polling = false;
    }
  }
}
