/**
 * End-to-end tests of messages JSON cannot encode (a `BigInt` in a result or
 * a notification) over Streamable HTTP: a response becomes `-32603` for its
 * id, a notification is dropped, in JSON and SSE answers, batches, both
 * eras, and the server keeps serving.
 */

import assert from "node:assert/strict";
import { defineServer } from "@anubis/core";
import {
  headers2026,
  initialize,
  post,
  request2026,
  SseReader,
  start,
  type TestServer,
} from "../helpers/http_helpers.ts";

const unencodable = () => ({ content: [{ type: "text", text: "x" }], _meta: { n: 1n } }) as never;

function unencodableServer() {
  return defineServer({
    name: "unencodable",
    version: "1.0.0",
    tools: [
      { name: "big", handler: unencodable },
      {
        name: "big_after_progress",
        handler: async (_args, frame) => {
          await frame.progress(1);
          return unencodable();
        },
      },
      {
        name: "big_progress",
        handler: async (_args, frame) => {
          await frame.progress(1, { total: 1n as never });
          await frame.progress(2);
          return "fine";
        },
      },
      { name: "echo", handler: () => "fine" },
    ],
  });
}

const call = (id: number, name: string) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: {}, _meta: { progressToken: `p${id}` } },
});

function assertInternalError(message: Record<string, unknown>, id: number): void {
  assert.equal(message.id, id, JSON.stringify(message));
  const error = message.error as { code: number; message: string };
  assert.equal(error.code, -32603);
  assert.match(error.message, /could not be encoded as JSON/);
}

async function withServer(run: (server: TestServer) => Promise<void>): Promise<void> {
  const server = start({}, unencodableServer());
  const errors = console.error;
  console.error = () => {};
  try {
    await run(server);
  } finally {
    console.error = errors;
    await server.close();
  }
}

Deno.test("http unencodable: stateless JSON and SSE answers carry -32603 for the id, and serving goes on", async () => {
  await withServer(async ({ url }) => {
    const json = await post(
      url,
      request2026(1, "tools/call", { name: "big", arguments: {} }),
      headers2026("tools/call", "big"),
    );
    assert.equal(json.status, 200);
    assert.equal(json.headers.get("content-type"), "application/json");
    assertInternalError(await json.json(), 1);

    const sse = await post(
      url,
      request2026(2, "tools/call", { name: "big_after_progress", arguments: {} }, {
        progressToken: "p2",
      }),
      headers2026("tools/call", "big_after_progress"),
    );
    assert.equal(sse.headers.get("content-type"), "text/event-stream");
    const [progress, last] = await new SseReader(sse).rest();
    assert.equal(progress.method, "notifications/progress");
    assertInternalError(last, 2);

    const dropped = await post(
      url,
      request2026(3, "tools/call", { name: "big_progress", arguments: {} }, {
        progressToken: "p3",
      }),
      headers2026("tools/call", "big_progress"),
    );
    const messages = await new SseReader(dropped).rest();
    assert.deepEqual(messages.map((m) => m.method ?? m.id), ["notifications/progress", 3]);
    assert.equal((messages[0].params as { progress: number }).progress, 2);

    const after = await post(
      url,
      request2026(4, "tools/call", { name: "echo", arguments: {} }),
      headers2026("tools/call", "echo"),
    );
    assert.equal((await after.json()).result.content[0].text, "fine");
  });
});

Deno.test("http unencodable: legacy JSON, SSE and batch answers carry -32603 for the id", async () => {
  await withServer(async ({ url }) => {
    const session = { "mcp-session-id": await initialize(url) };
    const json = await post(url, call(1, "big"), session);
    assert.equal(json.headers.get("content-type"), "application/json");
    assertInternalError(await json.json(), 1);

    const sse = await post(url, call(2, "big_after_progress"), session);
    assert.equal(sse.headers.get("content-type"), "text/event-stream");
    const [progress, last] = await new SseReader(sse).rest();
    assert.equal(progress.method, "notifications/progress");
    assertInternalError(last, 2);

    const dropped = await new SseReader(await post(url, call(3, "big_progress"), session)).rest();
    assert.deepEqual(dropped.map((m) => m.method ?? m.id), ["notifications/progress", 3]);

    const old = { "mcp-session-id": await initialize(url, "2025-03-26") };
    const batch = await post(url, [call(4, "big"), call(5, "echo")], old);
    assert.equal(batch.status, 200);
    const [first, second] = await batch.json();
    assertInternalError(first, 4);
    assert.equal(second.result.content[0].text, "fine");

    const after = await post(url, call(6, "echo"), session);
    assert.equal((await after.json()).result.content[0].text, "fine");
  });
});
