/**
 * A legacy session's client facts (client info and capabilities) are frozen
 * when the session gets them: a handler cannot grant itself a capability or
 * rename the client for the requests that follow. Modules are strict, so the
 * write throws a `TypeError` in the handler that tries it.
 */

import assert from "node:assert/strict";
import type { Frame, SessionRecord } from "@anubis/core";
import { engineHarness } from "../helpers/engine_harness.ts";

/** Tries every way a handler could change the session's client facts; names those that threw. */
function tamper(frame: Frame): string {
  const context = frame.context as unknown as {
    clientInfo: Record<string, unknown>;
    clientCapabilities: Record<string, Record<string, unknown>>;
  };
  const attempts: Record<string, () => void> = {
    sampling: () => (context.clientCapabilities.sampling = {}),
    elicitationUrl: () => (context.clientCapabilities.elicitation.url = {}),
    deleteRoots: () => delete context.clientCapabilities.roots,
    name: () => (context.clientInfo.name = "evil"),
  };
  const refused = Object.entries(attempts).flatMap(([name, attempt]) => {
    try {
      attempt();
      return [];
    } catch (error) {
      assert.ok(error instanceof TypeError);
      return [name];
    }
  });
  return refused.join(",");
}

function observe(frame: Frame): string {
  return JSON.stringify({
    canSample: frame.canSample(),
    canElicitUrl: frame.canElicit("url"),
    canListRoots: frame.canListRoots(),
    name: frame.context.clientInfo.name,
  });
}

const TOOLS = [
  {
    name: "tamper",
    description: "tries to change the client facts",
    handler: (_: unknown, frame: Frame) => tamper(frame),
  },
  {
    name: "observe",
    description: "reports the client facts",
    handler: (_: unknown, frame: Frame) => observe(frame),
  },
];

const SEEN = { canSample: false, canElicitUrl: false, canListRoots: true, name: "c" };

async function text(t: ReturnType<typeof engineHarness>, name: string): Promise<string> {
  return (await t.request("tools/call", { name })).result.content[0].text;
}

Deno.test("a handler cannot change the client facts later requests of its session see", async () => {
  const t = engineHarness({ tools: TOOLS }, { sessionId: "s-1" });
  const capabilities = { elicitation: {}, roots: { listChanged: true } };
  await t.request("initialize", {
    protocolVersion: "2025-11-25",
    capabilities,
    clientInfo: { name: "c", version: "1" },
  });
  await t.engine.handle({ jsonrpc: "2.0", method: "notifications/initialized" }, t.exchange);
  assert.equal(await text(t, "tamper"), "sampling,elicitationUrl,deleteRoots,name");
  assert.deepEqual(JSON.parse(await text(t, "observe")), SEEN);
  assert.deepEqual(t.engine.snapshot(t.session).clientCapabilities, capabilities);
  // The caller's own objects are copied, not frozen.
  capabilities.elicitation = { url: {} } as never;
  assert.deepEqual(JSON.parse(await text(t, "observe")), SEEN);
  t.engine.close();
});

Deno.test("a restored session's client facts are frozen too", async () => {
  const t = engineHarness({ tools: TOOLS });
  const record: SessionRecord = {
    v: 1,
    id: "s-restored",
    protocolVersion: "2025-11-25",
    clientInfo: { name: "c", version: "1" },
    clientCapabilities: { elicitation: {}, roots: {} },
    initialized: true,
    subscriptions: [],
    assigns: {},
    updatedAt: Date.now(),
  };
  const session = await t.engine.restoreSession(record, { transport: "test" }, t.exchange);
  const exchange = { ...t.exchange, session };
  const call = async (name: string) => {
    const reply = await t.engine.handle(
      { jsonrpc: "2.0", id: name, method: "tools/call", params: { name } },
      exchange,
    );
    const { result } = reply!.message as unknown as { result: { content: { text: string }[] } };
    return result.content[0].text;
  };
  assert.equal(await call("tamper"), "sampling,elicitationUrl,deleteRoots,name");
  assert.deepEqual(JSON.parse(await call("observe")), SEEN);
  t.engine.close();
});
