import assert from "node:assert/strict";
import { defineServer } from "@anubis/core";
import { createHttpHandler } from "./handler.ts";

const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
};

let cancelled = 0;
let finished = 0;
const server = defineServer({
  name: "handler-test",
  version: "1.0.0",
  tools: [{
    name: "wait",
    handler: async (_args, frame) => {
      await new Promise<void>((resolve) => frame.signal.addEventListener("abort", () => resolve()));
      cancelled++;
      return "cancelled";
    },
  }, {
    name: "who",
    handler: (_args, frame) =>
      JSON.stringify({
        user: frame.context.assigns.user,
        auth: frame.context.authInfo,
        session: frame.assigns.user,
      }),
  }, {
    name: "quick",
    handler: (_args, frame) => {
      frame.signal.addEventListener("abort", () => cancelled++);
      finished++;
      return "done";
    },
  }],
});

function call(name: string, signal?: AbortSignal, url = "http://localhost/mcp"): Request {
  return new Request(url, {
    method: "POST",
    signal,
    headers: {
      "content-type": "application/json",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/call",
      "mcp-name": name,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name, arguments: {}, _meta: META },
    }),
  });
}

Deno.test("handler: an abort after a completed response (as Deno does) cancels nothing", async () => {
  const handler = createHttpHandler(server);
  try {
    const abort = new AbortController();
    const before = cancelled;
    const response = await handler(call("quick", abort.signal));
    assert.equal(response.status, 200);
    assert.equal((await response.json()).result.content[0].text, "done");
    abort.abort();
    await new Promise((r) => setTimeout(r, 0));
    assert.equal(cancelled, before);
  } finally {
    handler.close();
  }
});

Deno.test("handler: an abort while the request runs cancels it", async () => {
  const handler = createHttpHandler(server);
  try {
    const abort = new AbortController();
    const before = cancelled;
    const pending = handler(call("wait", abort.signal));
    await new Promise((r) => setTimeout(r, 0));
    abort.abort();
    const response = await pending;
    assert.equal(response.status, 202);
    assert.equal(cancelled, before + 1);
  } finally {
    handler.close();
  }
});

Deno.test("handler: path false serves any path; otherwise only the endpoint", async () => {
  const anywhere = createHttpHandler(server, { path: false });
  const endpoint = createHttpHandler(server, { path: "/rpc" });
  try {
    const mounted = await anywhere(call("quick", undefined, "http://localhost/deep/mount?x=1"));
    assert.equal(mounted.status, 200);
    await mounted.body?.cancel();
    const wrong = await endpoint(call("quick", undefined, "http://localhost/mcp"));
    assert.equal(wrong.status, 404);
    await wrong.body?.cancel();
    const right = await endpoint(call("quick", undefined, "http://localhost/rpc?x=1"));
    assert.equal(right.status, 200);
    await right.body?.cancel();
  } finally {
    anywhere.close();
    endpoint.close();
  }
});

Deno.test("handler: a middleware's assigns and authInfo reach the frame in both eras", async () => {
  const handler = createHttpHandler(server);
  const context = { assigns: { user: "ada" }, authInfo: { scopes: ["read"] } };
  try {
    const modern = await handler(call("who"), context);
    assert.deepEqual(JSON.parse((await modern.json()).result.content[0].text), {
      user: "ada",
      auth: { scopes: ["read"] },
      session: "ada",
    });
    const headers = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    };
    const init = await handler(
      new Request("http://localhost/mcp", {
        method: "POST",
        headers,
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2025-11-25",
            capabilities: {},
            clientInfo: { name: "c", version: "1" },
          },
        }),
      }),
      context,
    );
    const sessionId = init.headers.get("mcp-session-id")!;
    await init.body?.cancel();
    const legacy = await handler(
      new Request("http://localhost/mcp", {
        method: "POST",
        headers: { ...headers, "mcp-session-id": sessionId },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 2,
          method: "tools/call",
          params: { name: "who", arguments: {} },
        }),
      }),
      { authInfo: "token" },
    );
    // The session keeps what initialize's middleware attached.
    assert.deepEqual(JSON.parse((await legacy.json()).result.content[0].text), {
      auth: "token",
      session: "ada",
    });
  } finally {
    handler.close();
  }
});

Deno.test("handler: a repeated Content-Type keeps its own verdict between others", async () => {
  const handler = createHttpHandler(server);
  const ping = (type: string | undefined) =>
    handler(
      new Request("http://localhost/mcp", {
        method: "POST",
        headers: type === undefined ? {} : { "content-type": type },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
      }),
    );
  for (
    const [type, refused] of [
      ["application/json", false],
      ["text/plain", true],
      ["text/plain", true],
      ["application/json; charset=utf-8", false],
      ["application/jsonx", true],
      [undefined, true],
      ["application/json", false],
    ] as const
  ) {
    const response = await ping(type);
    // Accepted types get past the media type check (to the session check here).
    assert.equal(response.status === 415, refused, String(type));
    await response.body?.cancel();
  }
  handler.close();
});

Deno.test("handler: a repeated MCP-Protocol-Version keeps its own verdict between others", async () => {
  const handler = createHttpHandler(server);
  const ping = (version: string) =>
    handler(
      new Request("http://localhost/mcp", {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "accept": "application/json, text/event-stream",
          "mcp-protocol-version": version,
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
      }),
    );
  // Without `_meta`, a stateless version is refused with 400 -32602; a legacy
  // one goes on to the session check (400 without Mcp-Session-Id, -32600).
  for (
    const [version, code] of [
      ["2025-11-25", -32600],
      ["2026-07-28", -32602],
      ["2026-07-28", -32602],
      ["2025-11-25", -32600],
      ["2025-11-25", -32600],
      ["2026-07-28", -32602],
    ] as const
  ) {
    const response = await ping(version);
    assert.equal((await response.json()).error.code, code, version);
  }
  handler.close();
});
