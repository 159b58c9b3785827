/**
 * Newline-delimited JSON-RPC over a byte stream pair, defaulting to the
 * process's stdin and stdout on Deno and Node.
 *
 * @module
 */

import { ErrorCode, logger, type McpServer } from "@anubis/core";
import {
  batchContentRefusal,
  batchSessionRefusal,
  batchSizeRefusal,
  boundBatchAnswer,
  type Decoded,
  decodeMessage,
  Engine,
  errorResponse,
  type JsonRpcMessage,
  type Registry,
  type Reply,
  reportUnencodable,
  type Session,
  splitBatch,
} from "@anubis/core/engine";
import type { TaskStore } from "@anubis/core";
import { createDefaultRegistry } from "@anubis/dialects";
import { redirectConsole } from "./console_redirect.ts";
import { type Line, LineSplitter } from "./_line_splitter.ts";
import { LineWriter } from "./_line_writer.ts";

/**
 * Options of {@link serveStdio}.
 *
 * @example
 * ```ts
 * import type { StdioOptions } from "@anubis/transport-stdio";
 * const options: StdioOptions = { gracePeriodMs: 2_000 };
 * ```
 */
export interface StdioOptions {
  /** Where messages come from (default: the process's stdin). */
  readable?: ReadableStream<Uint8Array>;
  /** Where messages go (default: the process's stdout). */
  writable?: WritableStream<Uint8Array>;
  /** The dialects (default: all four). */
  registry?: Registry;
  /**
   * Where tasks of task-capable tools are kept (default: a `MemoryTaskStore`
   * of this transport's own; share one store to answer for tasks across
   * instances).
   */
  taskStore?: TaskStore;
  /** The longest accepted line in bytes (default 64 MiB). */
  maxLineBytes?: number;
  /** The most entries in a JSON-RPC batch (2025-03-26; default 1,000); beyond it one -32600. */
  maxBatchEntries?: number;
  /**
   * The most bytes of JSON in a batch's answer (default 8 MiB); responses past
   * it become short -32603 errors for their ids.
   */
  maxBatchAnswerBytes?: number;
  /**
   * How much unwritten output (in UTF-16 code units, about bytes) stops the
   * reading of input until the reader of the output catches up (default 4 MiB).
   */
  highWaterMark?: number;
  /**
   * How long shutdown may take once input ends or `signal` aborts (default
   * 10 s): in-flight requests run, then the output is flushed, within it; work
   * still running then is cancelled, output nobody read then is dropped.
   */
  gracePeriodMs?: number;
  /** Stops reading, then shuts down as at end of input. */
  signal?: AbortSignal;
  /**
   * Sends every console method that prints to stdout to stderr while serving
   * the process's stdout (see {@link redirectConsole}), so stray prints cannot
   * corrupt the protocol stream (default `true` when writing to stdout). A
   * program that imports its server module after calling `serveStdio` should
   * call `redirectConsole` itself before the import, as `cli serve` does.
   */
  redirectConsole?: boolean;
}

const WHITESPACE = /^[\s]*$/;

/** Input read ahead while the output is full, kept until it drains (about one pipe read). */
const HELD_INPUT_BYTES = 64 * 1024;

type DenoLike = {
  stdin: { readable: ReadableStream<Uint8Array> };
  stdout: { writable: WritableStream<Uint8Array> };
};

async function processStreams(): Promise<[ReadableStream<Uint8Array>, WritableStream<Uint8Array>]> {
  const deno = (globalThis as { Deno?: DenoLike }).Deno;
  if (deno) return [deno.stdin.readable, deno.stdout.writable];
  const { Readable, Writable } = await import("node:stream");
  const nodeProcess = (globalThis as unknown as {
    process: { stdin: unknown; stdout: unknown };
  }).process;
  return [
    Readable.toWeb(nodeProcess.stdin as never) as unknown as ReadableStream<Uint8Array>,
    Writable.toWeb(nodeProcess.stdout as never) as WritableStream<Uint8Array>,
  ];
}

/**
 * Serves a server over newline-delimited JSON-RPC until the input ends (or
 * `signal` aborts): requests run concurrently, responses are written whole in
 * arrival order of completion, writes respect backpressure. Both eras share
 * the connection: legacy after `initialize`, stateless for any request whose
 * `_meta` claims it. While more output than `highWaterMark` waits for its
 * reader, no more input is read. A message JSON cannot encode is reported on
 * stderr (a response goes out as a `-32603` error for its id). At the end
 * (end of input, or `signal`, which also ends a wait for a stalled reader),
 * in-flight work and then the flush of the output share the grace period:
 * work still running after it is cancelled, output still unread is dropped.
 *
 * @param server The defined server.
 * @param options Streams, limits and shutdown.
 * @returns Resolves when serving is over.
 *
 * @example
 * ```ts ignore
 * import { defineServer } from "@anubis/core";
 * import { serveStdio } from "@anubis/transport-stdio";
 * await serveStdio(defineServer({ name: "hello", version: "1.0.0" }));
 * ```
 */
export async function serveStdio(server: McpServer, options: StdioOptions = {}): Promise<void> {
  await server.ready;
  let readable = options.readable, writable = options.writable;
  const usesProcess = !readable || !writable;
  // Deno's own stdin and stdout let one buffer serve every read and every
  // write: stdin answers reads into a buffer given, and stdout is done with a
  // chunk once its write settles. (A byte stream the caller passes may come
  // from a source that never answers such a read: its last read would wait
  // forever; a writable the caller passes may keep its chunks.)
  const onDeno = "Deno" in globalThis;
  if (usesProcess) {
    const [stdin, stdout] = await processStreams();
    readable ??= stdin;
    writable ??= stdout;
  }
  const restoreConsole = (options.redirectConsole ?? !options.writable)
    ? redirectConsole()
    : undefined;
  const engine = new Engine(server, {
    registry: options.registry ?? createDefaultRegistry(),
    taskStore: options.taskStore,
  });
  const writer = writable!.getWriter();
  const lines = new LineWriter(writer, {
    highWaterMark: options.highWaterMark,
    onUnencodable: reportUnencodable,
    reusableChunks: onDeno && !options.writable,
  });
  const write = (message: JsonRpcMessage | JsonRpcMessage[]): Promise<void> => lines.write(message);
  const session = engine.createSession({ transport: "stdio", onMessage: write });
  const exchange = { session, transport: "stdio", emit: write };
  // Requests being served; `idle` wakes the shutdown once none is left.
  let running = 0;
  let idle: (() => void) | undefined;
  const finished = () => {
    if (--running === 0) idle?.();
  };

  const connection: Connection = { engine, session, exchange, write, finished, limits: options };

  const reader = new ChunkReader(readable!, onDeno && !options.readable);
  let abort!: () => void;
  const aborted = new Promise<void>((resolve) => abort = resolve);
  const onAbort = () => {
    abort();
    reader.cancel().catch(() => {});
  };
  options.signal?.addEventListener("abort", onAbort, { once: true });
  if (options.signal?.aborted) onAbort();
  const splitter = new LineSplitter(options.maxLineBytes ?? 64 * 1024 * 1024);
  const dispatch = (line: Line) => {
    if ("tooLong" in line) {
      write(
        errorResponse(
          null,
          ErrorCode.INVALID_REQUEST,
          `Message of ${line.tooLong} bytes is too large`,
        ),
      );
      return;
    }
    const payload = "text" in line ? line.text : line.bytes;
    const decoded = decodeMessage(payload);
    if (decoded.kind === "invalid" && isBlank(payload)) return;
    running++;
    if (decoded.kind === "request" && decoded.message.method !== "initialize") {
      // The common case, without a suspended frame per message: a request
      // served at once is answered at once; the engine never rejects, and one
      // shared callback writes every reply.
      const reply = engine.handleNow(decoded.message, exchange);
      if (reply instanceof Promise) reply.then(answered);
      else answered(reply);
      return;
    }
    serveDecoded(decoded, connection);
  };
  // Queued in order; the shutdown waits for the writer to drain.
  const answered = (reply: Reply | undefined) => {
    try {
      if (reply) void write(reply.message);
    } finally {
      finished();
    }
  };
  // The answers given at once to the lines of one read start to leave in one
  // write before the next read is asked for (which saves the event loop a
  // wake-up per read on a pipe).
  const dispatchChunk = (chunk: Uint8Array) => {
    lines.cork();
    try {
      for (const line of splitter.pushText(chunk)) dispatch(line);
    } finally {
      lines.uncork();
    }
  };
  // Input read while the output is full waits here (up to HELD_INPUT_BYTES),
  // so reading goes on far enough to see a short tail of input end.
  const held: Uint8Array[] = [];
  let heldBytes = 0;
  try {
    let ahead: Promise<ReadableStreamReadResult<Uint8Array>> | undefined;
    let ended = false;
    while (!ended) {
      // Backpressure: nobody reads the output, so take no more work; an end of
      // input (or an abort, which cancels the read) still ends the wait.
      while (lines.full && !options.signal?.aborted) {
        if (heldBytes >= HELD_INPUT_BYTES) {
          await Promise.race([lines.ready, aborted]);
          continue;
        }
        ahead ??= reader.read();
        const next = await Promise.race([lines.ready.then(() => undefined), ahead]);
        if (next === undefined) break; // drained; the pending read is kept
        ahead = undefined;
        if (next.done) {
          ended = true;
          break;
        }
        // Kept past the next read, which reuses the chunk's buffer.
        held.push(next.value.slice());
        heldBytes += next.value.byteLength;
      }
      if (options.signal?.aborted) break;
      for (const chunk of held.splice(0)) dispatchChunk(chunk);
      heldBytes = 0;
      if (ended || lines.full) continue;
      const { value, done } = await (ahead ?? reader.read());
      ahead = undefined;
      if (done) break;
      dispatchChunk(value);
    }
  } catch (error) {
    // A broken input ends serving like an end of input; the operator is told why.
    logger.error("stdio.input_failed", "stdio input failed; serving ends as at end of input", {
      error,
      transport: "stdio",
    });
  }
  const last = splitter.flush();
  if (last) dispatch(last);
  options.signal?.removeEventListener("abort", onAbort);

  // End of input: listen streams end gracefully; work, then the output, get
  // the grace period, after which serving ends even if nobody reads the output.
  engine.close();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const graceOver = new Promise<false>((resolve) => {
    timer = setTimeout(resolve, options.gracePeriodMs ?? 10_000, false);
  });
  if (running > 0) await Promise.race([new Promise<void>((resolve) => idle = resolve), graceOver]);
  if (session.dialect) {
    logger.info("session.closed", "session on stdio closed (end of input)", {
      reason: "end of input",
      transport: "stdio",
    });
  }
  engine.dropSession(session);
  const drained = await Promise.race([lines.drained().then(() => true), graceOver]);
  clearTimeout(timer);
  if (usesProcess && !options.writable) writer.releaseLock();
  else if (drained) await writer.close().catch(() => {});
  // Output nobody read is dropped; waiting for the stream would wait for that reader.
  else writer.abort(new Error("the grace period ended before the output was read")).catch(() => {});
  restoreConsole?.();
}

/** Bytes asked for by each read of a byte stream (about a pipe's capacity). */
const READ_BYTES = 64 * 1024;

/**
 * Reads a stream's chunks. The process's stdin on Deno is read into one
 * buffer, handed back by each read for the next one, so no read allocates
 * (and zeroes) a new 64 KiB buffer: a chunk is valid until the next `read`.
 * Any other stream is read as it is.
 */
class ChunkReader {
  readonly #bytes: ReadableStreamBYOBReader | undefined;
  readonly #chunks: ReadableStreamDefaultReader<Uint8Array> | undefined;
  #buffer: ArrayBufferLike | undefined;

  constructor(readable: ReadableStream<Uint8Array>, intoBuffer: boolean) {
    if (intoBuffer) {
      this.#bytes = readable.getReader({ mode: "byob" });
      this.#buffer = new ArrayBuffer(READ_BYTES);
    } else {
      this.#chunks = readable.getReader();
    }
  }

  read(): Promise<ReadableStreamReadResult<Uint8Array>> {
    if (!this.#bytes) return this.#chunks!.read();
    return this.#bytes.read(new Uint8Array(this.#buffer!)).then(this.#reclaim);
  }

  // The buffer came back (transferred) in the chunk's view: the next read reuses it.
  #reclaim = (
    result: ReadableStreamReadResult<Uint8Array>,
  ): ReadableStreamReadResult<Uint8Array> => {
    if (result.value) this.#buffer = result.value.buffer;
    return result;
  };

  cancel(): Promise<void> {
    return (this.#bytes ?? this.#chunks!).cancel();
  }
}

function isBlank(payload: string | Uint8Array): boolean {
  if (typeof payload === "string") return WHITESPACE.test(payload);
  try {
    return WHITESPACE.test(new TextDecoder("utf-8", { fatal: true }).decode(payload));
  } catch {
    return false;
  }
}

/** What {@link serveDecoded} serves one connection's messages with. */
interface Connection {
  engine: Engine;
  session: Session;
  exchange: { session: Session; transport: string; emit: (m: JsonRpcMessage) => Promise<void> };
  write: (message: JsonRpcMessage | JsonRpcMessage[]) => Promise<void>;
  /** Called once the message is served. */
  finished: () => void;
  limits: Pick<StdioOptions, "maxBatchEntries" | "maxBatchAnswerBytes">;
}

async function serveDecoded(
  decoded: Decoded,
  { engine, session, exchange, write, finished, limits }: Connection,
): Promise<void> {
  try {
    if (decoded.kind === "invalid") {
      await write(decoded.error);
    } else if (decoded.kind === "batch") {
      const { messages, errors } = splitBatch(decoded.entries);
      const refusal = batchSizeRefusal(decoded.entries.length, limits.maxBatchEntries) ??
        batchContentRefusal(messages) ?? batchSessionRefusal(session.dialect);
      if (refusal) {
        await write(errorResponse(null, ErrorCode.INVALID_REQUEST, refusal));
        return;
      }
      // As JSON-RPC 2.0 §6 and the HTTP transport: one array holds the
      // errors of the invalid entries and the responses of the rest.
      const responses = await engine.handleBatch(messages, exchange);
      const all = boundBatchAnswer([...errors, ...responses], limits.maxBatchAnswerBytes);
      if (all.length > 0) await write(all as JsonRpcMessage[]);
    } else {
      const reply = await engine.handle(decoded.message, exchange);
      // Queued in order; the shutdown waits for the writer to drain.
      if (reply) void write(reply.message);
      const { message } = decoded;
      if (
        reply && "result" in reply.message && "method" in message && message.method === "initialize"
      ) {
        const version = session.dialect?.version;
        logger.info("session.opened", `session opened on stdio (${version})`, {
          protocolVersion: version,
          transport: "stdio",
        });
      }
    }
  } finally {
    finished();
  }
}
