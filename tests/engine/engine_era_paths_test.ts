/**
 * The engine writes each era's way from a handler's outcome to the answer
 * once: the answer at once when the handler answered at once, else once its
 * promise settles. These pin both ways of both eras over the real engine,
 * through `handleNow` (which shows which way was taken): a value and a
 * promise, a synchronous throw and a rejection, `NO_REPLY`, and a
 * cancellation while pending; and that a request's tracking ends either way.
 */

import assert from "node:assert/strict";
import {
  ErrorCode,
  type JsonRpcRequest,
  McpError,
  NO_REPLY,
  type ServerDefinition,
} from "@anubis/core";
import type { Exchange, Reply } from "@anubis/core/engine";
import { engineHarness, META } from "../helpers/engine_harness.ts";

const later = () => new Promise((resolve) => setTimeout(resolve, 1));

function harness(definition: Partial<ServerDefinition> = {}) {
  let release!: () => void;
  const held = new Promise<void>((resolve) => release = resolve);
  const t = engineHarness({
    ...definition,
    tools: [
      { name: "value", handler: () => "at once" },
      {
        name: "promise",
        handler: async () => {
          await later();
          return "later";
        },
      },
      {
        name: "throws",
        handler: () => {
          throw new McpError(ErrorCode.INVALID_PARAMS, "thrown at once");
        },
      },
      {
        name: "rejects",
        handler: async () => {
          await later();
          throw new McpError(ErrorCode.METHOD_NOT_FOUND, "rejected later");
        },
      },
      {
        name: "held",
        handler: async () => {
          await held;
          return "too late";
        },
      },
    ],
  });
  return { ...t, release };
}

type Era = "legacy" | "stateless";

function call(era: Era, id: number, name: string): JsonRpcRequest {
  const params = { name, arguments: {}, ...(era === "stateless" ? { _meta: META } : {}) };
  return { jsonrpc: "2.0", id, method: "tools/call", params };
}

function text(reply: Reply | undefined): unknown {
  return (reply?.message as { result?: { content: { text: string }[] } }).result?.content[0].text;
}

function error(reply: Reply | undefined): unknown {
  return (reply?.message as { error?: { code: number; message: string } }).error;
}

for (const era of ["legacy", "stateless"] as const) {
  Deno.test(`${era}: a value is answered at once, a promise once it settles`, async () => {
    const t = harness();
    await t.initialize();
    const now = t.engine.handleNow(call(era, 1, "value"), t.exchange);
    assert.equal(now instanceof Promise, false);
    assert.equal(text(now as Reply), "at once");
    const pending = t.engine.handleNow(call(era, 2, "promise"), t.exchange);
    assert.equal(pending instanceof Promise, true);
    assert.equal(text(await pending), "later");
    t.engine.close();
  });

  Deno.test(`${era}: a synchronous throw is answered at once, a rejection once it settles`, async () => {
    const t = harness();
    await t.initialize();
    const thrown = t.engine.handleNow(call(era, 1, "throws"), t.exchange);
    assert.equal(thrown instanceof Promise, false);
    assert.deepEqual(error(thrown as Reply), {
      code: ErrorCode.INVALID_PARAMS,
      message: "thrown at once",
    });
    const rejected = t.engine.handleNow(call(era, 2, "rejects"), t.exchange);
    assert.equal(rejected instanceof Promise, true);
    const reply = await rejected;
    assert.deepEqual(error(reply), { code: ErrorCode.METHOD_NOT_FOUND, message: "rejected later" });
    // The era decides the HTTP status of the same error.
    assert.equal(reply?.status, era === "legacy" ? 200 : 404);
    t.engine.close();
  });

  Deno.test(`${era}: NO_REPLY is no answer`, async () => {
    // The server's own handler (which makes every answer wait) answers nothing.
    const t = harness({
      handleRequest: (request, _frame, next) =>
        request.params?.name === "silent" ? NO_REPLY : next(),
    });
    await t.initialize();
    assert.equal(await t.engine.handleNow(call(era, 1, "silent"), t.exchange), undefined);
    assert.equal(text(await t.engine.handleNow(call(era, 2, "value"), t.exchange)), "at once");
    t.engine.close();
  });

  Deno.test(`${era}: a request cancelled while pending gets no answer, and its id is free again`, async () => {
    const t = harness();
    await t.initialize();
    const abort = new AbortController();
    const exchange: Exchange = { ...t.exchange, signal: abort.signal };
    const pending = t.engine.handleNow(call(era, 7, "held"), exchange);
    assert.equal(pending instanceof Promise, true);
    await t.engine.handle({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: 7 },
    }, exchange);
    abort.abort(); // the stateless era's cancellation: the client went away
    t.release();
    assert.equal(await pending, undefined);
    // The tracking ended with the request: the same id is served again, and answered.
    const again = await t.engine.handle(call(era, 7, "value"), t.exchange);
    assert.equal(text(again), "at once");
    // Cancelling an id no longer in flight touches nothing.
    await t.engine.handle({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: 7 },
    }, t.exchange);
    assert.equal(text(await t.engine.handle(call(era, 8, "value"), t.exchange)), "at once");
    t.engine.close();
  });
}
