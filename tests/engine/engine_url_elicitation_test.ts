/**
 * URL elicitation's -32042 and `frame.completeElicitation` per version: the
 * notification goes to the session's own stream (not the request's) on
 * 2025-11-25, and nowhere on a version without it (2025-06-18, or a
 * 2026-07-28 stateless request).
 */

import assert from "node:assert/strict";
import { defineServer, type Frame, urlElicitationRequired } from "@anubis/core";
import { Engine, type JsonRpcMessage } from "@anubis/core/engine";
import { createDefaultRegistry } from "@anubis/dialects";

// deno-lint-ignore no-explicit-any
const body = (reply: unknown): any => (reply as { message: unknown }).message;

function setup() {
  const frames: Frame[] = [];
  const server = defineServer({
    name: "s",
    version: "1.0.0",
    tools: [{
      name: "connect",
      handler: (_args, frame) => {
        frames.push(frame);
        throw urlElicitationRequired([{
          elicitationId: "e1",
          url: "https://a.example/x",
          message: "Sign in",
        }]);
      },
    }],
  });
  return { frames, engine: new Engine(server, { registry: createDefaultRegistry() }) };
}

for (const [version, sent] of [["2025-11-25", true], ["2025-06-18", false]] as const) {
  Deno.test(`URL elicitation at ${version}: -32042 with its elicitations; completion ${sent ? "sent on the session's stream" : "not sent"}`, async () => {
    const { frames, engine } = setup();
    const onSession: JsonRpcMessage[] = [];
    const onRequest: JsonRpcMessage[] = [];
    const session = engine.createSession({
      transport: "http",
      id: crypto.randomUUID(),
      onMessage: (message) => void onSession.push(message),
    });
    await engine.handle({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: {
        protocolVersion: version,
        capabilities: { elicitation: { url: {} } },
        clientInfo: { name: "t", version: "0" },
      },
    }, { transport: "http", session });
    await engine.handle({ jsonrpc: "2.0", method: "notifications/initialized" }, {
      transport: "http",
      session,
    });
    const reply = body(
      await engine.handle(
        { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "connect" } },
        { transport: "http", session, emit: (message) => void onRequest.push(message) },
      ),
    );
    assert.deepEqual(reply.error, {
      code: -32042,
      message: "URL elicitation required",
      data: {
        elicitations: [{
          mode: "url",
          elicitationId: "e1",
          url: "https://a.example/x",
          message: "Sign in",
        }],
      },
    });
    // After the request ended, through its frame.
    assert.equal(await frames[0].completeElicitation("e1"), sent);
    assert.deepEqual(onRequest, []);
    assert.deepEqual(
      onSession,
      sent
        ? [{
          jsonrpc: "2.0",
          method: "notifications/elicitation/complete",
          params: { elicitationId: "e1" },
        }]
        : [],
    );
    engine.close();
  });
}

Deno.test("URL elicitation at 2026-07-28 (stateless): no completion notification exists", async () => {
  const { frames, engine } = setup();
  const emitted: JsonRpcMessage[] = [];
  await engine.handle({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: {
      name: "connect",
      _meta: {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": { elicitation: { url: {} } },
      },
    },
  }, { transport: "http", emit: (message) => void emitted.push(message) });
  assert.equal(await frames[0].completeElicitation("e1"), false);
  assert.deepEqual(emitted, []);
  engine.close();
});
