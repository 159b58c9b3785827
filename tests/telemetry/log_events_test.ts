/**
 * The engine's operator events: a failing `handleNotification`, a failing
 * middleware around a notification and a defect in the engine are each
 * written once to the operator's log, as an `error` event with its method
 * and error, and never with the notification's params.
 */

import assert from "node:assert/strict";
import type { Middleware } from "@anubis/core";
import { engineHarness } from "../helpers/engine_harness.ts";
import { captureLog } from "../helpers/log_capture.ts";

const SECRET = "secret-param-never-logged";
const NOTIFICATION = {
  jsonrpc: "2.0",
  method: "notifications/roots/list_changed",
  params: { secret: SECRET },
} as const;

/** The records of `run`'s log, with their time checked and removed. */
async function logged(run: () => Promise<unknown>): Promise<Record<string, unknown>[]> {
  const log = captureLog();
  try {
    await run();
  } finally {
    log.restore();
  }
  for (const line of log.lines) assert.doesNotMatch(line, new RegExp(SECRET));
  return log.records().map(({ time, ...rest }) => {
    assert.equal(typeof time, "string");
    return rest;
  });
}

Deno.test("log: a handleNotification that throws is one notification.failed error event", async () => {
  const t = engineHarness({
    handleNotification: () => {
      throw new Error("handler broke");
    },
  });
  await t.initialize();
  const records = await logged(() => t.engine.handle(NOTIFICATION, t.exchange));
  assert.deepEqual(records, [{
    level: "error",
    event: "notification.failed",
    msg: "handleNotification(notifications/roots/list_changed) failed",
    method: "notifications/roots/list_changed",
    error: "handler broke",
  }]);
});

Deno.test("log: a middleware that throws on a notification is one middleware.failed error event", async () => {
  const failing: Middleware = (call, next) => {
    if (call.method === NOTIFICATION.method) throw new Error("middleware broke");
    return next();
  };
  const t = engineHarness({ middleware: [failing] });
  await t.initialize();
  const records = await logged(() => t.engine.handle(NOTIFICATION, t.exchange));
  assert.deepEqual(records, [{
    level: "error",
    event: "middleware.failed",
    msg: "middleware of notifications/roots/list_changed failed",
    method: "notifications/roots/list_changed",
    error: "middleware broke",
  }]);
});

Deno.test("log: a defect in the engine is one engine.failed error event", async () => {
  const t = engineHarness({});
  await t.initialize();
  // A session whose answer routing throws stands for a defect inside the engine.
  t.session.resolve = () => {
    throw new Error("routing broke");
  };
  const records = await logged(() =>
    t.engine.handle({ jsonrpc: "2.0", id: 99, result: { secret: SECRET } }, t.exchange)
  );
  assert.deepEqual(records, [{
    level: "error",
    event: "engine.failed",
    msg: "engine failure",
    error: "routing broke",
  }]);
});
