/**
 * End-to-end test: a stateless request whose client went away before its
 * handler asked for input gets no `input_required` round, although neither
 * the handler nor the transport looked at a signal before then.
 */

import assert from "node:assert/strict";
import { createHttpHandler } from "@anubis/transport-http";
import { defineServer } from "@anubis/core";
import { headers2026, JSON_HEADERS, request2026 } from "../helpers/http_helpers.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

Deno.test("http 2026: a client gone before the handler asks for input gets no input_required, and serving goes on", async () => {
  const started = Promise.withResolvers<void>();
  const release = Promise.withResolvers<void>();
  const server = defineServer({
    name: "input-cancel",
    version: "1.0.0",
    tools: [{
      name: "ask_later",
      // Never reads frame.signal.
      handler: async (_args, frame) => {
        started.resolve();
        await release.promise;
        const answer = await frame.elicit({
          message: "Name?",
          requestedSchema: { type: "object", properties: { name: { type: "string" } } },
        }, { key: "name" });
        return `Hello, ${answer.content?.name}`;
      },
    }, { name: "echo", handler: () => "fine" }],
  });
  const handler = createHttpHandler(server, { keepAliveMs: 0 });
  const answered: { status: number; body: string }[] = [];
  const http = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
    const response = await handler(request);
    answered.push({ status: response.status, body: await response.clone().text() });
    return response;
  });
  const url = `http://127.0.0.1:${http.addr.port}/mcp`;
  const call = (id: number, name: string, signal?: AbortSignal) =>
    fetch(url, {
      method: "POST",
      headers: { ...JSON_HEADERS, ...headers2026("tools/call", name) },
      body: JSON.stringify(
        request2026(id, "tools/call", { name, arguments: {} }, {
          "io.modelcontextprotocol/clientCapabilities": { elicitation: {} },
        }),
      ),
      signal,
    });
  try {
    const client = new AbortController();
    const pending = call(1, "ask_later", client.signal).catch((error) => error);
    await started.promise;
    client.abort();
    assert.equal((await pending).name, "AbortError");
    // The server's event loop turns over meanwhile, so the disconnect is known.
    await sleep(100);
    release.resolve();
    for (let i = 0; i < 200 && answered.length === 0; i++) await sleep(10);
    assert.equal(answered.length, 1, "the request was settled");
    assert.doesNotMatch(answered[0].body, /input_required/);
    assert.equal(answered[0].body, "");

    const after = await call(2, "echo");
    assert.equal((await after.json()).result.content[0].text, "fine");
  } finally {
    release.resolve();
    handler.close();
    await http.shutdown();
  }
});
