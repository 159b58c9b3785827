/**
 * Params validation reaches every request the engine serves, whatever path
 * serves it (the default routing, `handleRequest`-free built-ins, multi
 * round-trip methods, `subscriptions/listen`): params the dialect's schema
 * rejects are `-32602` with the request's id.
 */

import assert from "node:assert/strict";
import { defineServer } from "@anubis/core";
import { Engine, type JsonRpcMessage, type Reply } from "@anubis/core/engine";
import * as s from "@anubis/core/schema";
import { ALL_DIALECTS, createDefaultRegistry } from "@anubis/dialects";
import { engineHarness, META } from "../helpers/engine_harness.ts";

/** A server that declares every capability, so no method is refused as undeclared. */
const EVERYTHING = {
  tools: [{ name: "echo", description: "echoes", handler: () => "echoed" }],
  prompts: [{ name: "greet", description: "greets", handler: () => [] }],
  resources: [{ uri: "test://a", name: "a", read: () => "a" }],
  capabilities: {
    tools: { listChanged: true },
    prompts: { listChanged: true },
    resources: { subscribe: true, listChanged: true },
    completions: {},
    logging: {},
  },
};

/** The reply, or a failure naming what the engine did instead of answering. */
async function answered(
  pending: Promise<Reply | undefined>,
  emitted: JsonRpcMessage[],
): Promise<Reply> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no reply; the engine sent ${JSON.stringify(emitted)}`)),
      1_000,
    );
  });
  try {
    const reply = await Promise.race([pending, late]);
    assert.ok(reply, "a reply");
    return reply;
  } finally {
    clearTimeout(timer);
  }
}

Deno.test("subscriptions/listen with params its schema rejects is -32602 with the id, and opens no stream", async () => {
  const probes: Record<string, unknown>[] = [
    {},
    { notifications: 5 },
    { notifications: { resourceSubscriptions: "test://static-text" } },
    { notifications: { toolsListChanged: "yes" } },
  ];
  for (const probe of probes) {
    const t = engineHarness(EVERYTHING);
    try {
      const reply = await answered(
        t.send("subscriptions/listen", { _meta: META, ...probe }),
        t.emitted,
      );
      const message = reply.message as { id: unknown; error?: { code: number; message: string } };
      assert.equal(message.id, 1, JSON.stringify(probe));
      assert.equal(message.error?.code, -32602, JSON.stringify(probe));
      assert.match(message.error!.message, /^Invalid params: /);
      assert.equal(reply.status, 200, "in-band, as for every method's params but the envelope's");
      assert.deepEqual(t.emitted, [], "no acknowledgement");
      assert.equal(t.engine.listenerCount, 0);
    } finally {
      t.engine.close();
    }
  }
});

/** Params `schema` rejects: one field given a value of the wrong type, if any field can be. */
function invalidParams(
  schema: s.Schema,
  base: Record<string, unknown>,
): Record<string, unknown> | undefined {
  if (schema.kind !== "object") return undefined;
  for (const key of Object.keys((schema as s.ObjectSchema<s.Shape>).shape)) {
    if (key === "_meta") continue;
    for (const wrong of [12345, "x"]) {
      const params = { ...base, [key]: wrong };
      if (!s.validate(schema, params).ok) return params;
    }
  }
  return undefined;
}

Deno.test("every method with a params schema, in every version, answers params it rejects with -32602", async () => {
  const covered: string[] = [];
  for (const dialect of ALL_DIALECTS) {
    const stateless = dialect.era === "stateless";
    const base = stateless ? { _meta: META } : {};
    for (const method of dialect.requestMethods) {
      if (method === "initialize") continue; // before any dialect: tests/engine/engine_test.ts
      const schema = dialect.requestParamsSchema(method);
      const params = schema && invalidParams(schema, base);
      if (!params) continue;
      const t = engineHarness(EVERYTHING);
      try {
        if (!stateless) await t.initialize(dialect.version);
        const reply = await answered(t.send(method, params), t.emitted);
        const error = (reply.message as { error?: { code: number } }).error;
        assert.equal(error?.code, -32602, `${dialect.version} ${method} ${JSON.stringify(params)}`);
        covered.push(`${dialect.version} ${method}`);
      } finally {
        t.engine.close();
      }
    }
  }
  for (const expected of ["2026-07-28 subscriptions/listen", "2026-07-28 tools/call"]) {
    assert.ok(covered.includes(expected), `${expected} is covered`);
  }
  assert.ok(covered.length > 40, `${covered.length} methods covered`);
});

Deno.test("initialize refuses capabilities or clientInfo nested deeper than 64 levels, flat or not", async () => {
  const engine = new Engine(defineServer({ name: "t", version: "1.0.0" }), {
    registry: createDefaultRegistry(),
  });
  const nested = (levels: number): Record<string, unknown> => {
    let value: Record<string, unknown> = {};
    for (let i = 1; i < levels; i++) value = { a: 1, next: value, b: { c: true } };
    return value;
  };
  const init = async (capabilities: unknown, clientInfo: unknown = { name: "c", version: "1" }) => {
    const session = engine.createSession({ transport: "stdio" });
    const reply = await engine.handle({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities, clientInfo },
    }, { transport: "stdio", session });
    engine.dropSession(session);
    const message = reply!.message;
    return "error" in message ? message.error.message : "ok";
  };
  assert.equal(await init({}), "ok");
  assert.equal(await init(nested(64)), "ok");
  assert.match(await init(nested(65)), /capabilities nests deeper than 64 levels/);
  assert.match(
    await init({}, { name: "c", version: "1", x: nested(64) }),
    /clientInfo nests deeper than 64 levels/,
  );
  engine.close();
});
