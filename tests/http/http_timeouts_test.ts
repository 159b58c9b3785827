/**
 * Connection timeouts over real sockets: `cli serve --http --header-timeout
 * --idle-timeout` serves on the `node:http` listener, which closes a
 * connection that sent nothing, one that sent half a header and a kept-alive
 * one idle after its response, while the official SDK v1 client works and a
 * quiet GET stream outlives the idle timeout.
 */

import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startHttpServer } from "../helpers/everything_http_server.ts";
import { headers2026, initialize, post, request2026, SseReader } from "../helpers/http_helpers.ts";

const TIMEOUT_MS = 400;
/** A bound on waiting for the server to close a socket; never a timing assertion. */
const BOUND_MS = 10_000;

/** Resolves how the server ended the connection: "closed", or "open" at the bound. */
async function closedByServer(conn: Deno.Conn): Promise<"closed" | "open"> {
  const bound = setTimeout(() => conn.close(), BOUND_MS);
  const buffer = new Uint8Array(16 * 1024);
  try {
    for (;;) {
      if (await conn.read(buffer) === null) return "closed";
    }
  } catch (error) {
    return error instanceof Deno.errors.ConnectionReset ? "closed" : "open";
  } finally {
    clearTimeout(bound);
    try {
      conn.close();
    } catch {
      // Closed already.
    }
  }
}

Deno.test("http timeouts: silent, half-sent and idle kept-alive connections are closed; clients and streams are served", async () => {
  const server = await startHttpServer([
    "--header-timeout",
    String(TIMEOUT_MS),
    "--idle-timeout",
    String(TIMEOUT_MS),
  ]);
  const port = Number(server.url.port);
  const connect = () => Deno.connect({ hostname: "127.0.0.1", port });
  const text = new TextEncoder();
  try {
    const silent = await connect();
    const halfHeader = await connect();
    await halfHeader.write(text.encode(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`));
    const keptAlive = await connect();
    await keptAlive.write(text.encode(`GET /health HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`));
    const ends = Promise.all([silent, halfHeader, keptAlive].map(closedByServer));

    // Meanwhile a real client's session works, and a quiet GET stream stays open
    // past the idle timeout (a response in progress is not idle).
    const session = await initialize(server.url.href);
    const stream = await fetch(server.url, {
      headers: {
        accept: "text/event-stream",
        "mcp-session-id": session,
        "mcp-protocol-version": "2025-11-25",
      },
    });
    assert.equal(stream.status, 200);
    const events = new SseReader(stream);
    await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS * 3));

    const client = new Client({ name: "timeouts-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(server.url));
    const tools = await client.listTools();
    assert.ok(
      tools.tools.some((tool: { name: string }) => tool.name === "test_trigger_tool_change"),
    );
    await client.callTool({ name: "test_trigger_tool_change", arguments: {} });
    await client.close();

    // The change reaches the quiet stream opened before the wait.
    let event = await events.next();
    while (event !== undefined && !event.data) event = await events.next();
    assert.equal(JSON.parse(event!.data!).method, "notifications/tools/list_changed");
    await events.cancel();

    assert.deepEqual(await ends, ["closed", "closed", "closed"]);
  } finally {
    const { code, stderr } = await server.stop();
    assert.equal(code, 0, stderr);
  }
});

Deno.test("http timeouts: on node:http, a large body is read and a slow one gets the body timeout's 408", async () => {
  const server = await startHttpServer(["--idle-timeout", "5000", "--body-timeout", "1000"]);
  const port = Number(server.url.port);
  try {
    // 100 kB of arguments: read past the 16 KiB reserve, chunk by chunk.
    const text = "x".repeat(100_000);
    const called = await post(
      server.url.href,
      request2026(1, "tools/call", { name: "test_simple_text", arguments: { padding: text } }),
      headers2026("tools/call", "test_simple_text"),
    );
    assert.equal(called.status, 200);
    assert.ok((await called.json()).result);

    const slow = await Deno.connect({ hostname: "127.0.0.1", port });
    await slow.write(
      new TextEncoder().encode(
        `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\n` +
          // Mcp-Method: without it nor Mcp-Session-Id, a body over 1 MiB is refused unread.
          `accept: application/json, text/event-stream\r\nmcp-method: tools/call\r\n` +
          `content-length: 4194304\r\n\r\n{`,
      ),
    );
    let answer = "";
    const buffer = new Uint8Array(4096);
    const bound = setTimeout(() => slow.close(), BOUND_MS);
    try {
      for (let n = await slow.read(buffer); n !== null; n = await slow.read(buffer)) {
        answer += new TextDecoder().decode(buffer.subarray(0, n));
      }
    } catch {
      // Closed at the bound: the assertion below says so.
    } finally {
      clearTimeout(bound);
    }
    assert.match(answer, /^HTTP\/1\.1 408 /);
  } finally {
    const { code, stderr } = await server.stop();
    assert.equal(code, 0, stderr);
  }
});
