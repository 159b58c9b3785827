/**
 * Connection timeouts over real sockets, on `cli serve --http`'s default
 * listener (Deno's native HTTP server with an accept loop of its own): a
 * connection that sent nothing, one that sent half a header and a kept-alive
 * one idle after its response are closed, with the default timeouts (no flag)
 * and with `--header-timeout`/`--idle-timeout` shortening them, while the
 * official SDK v1 client works, a quiet GET stream outlives the idle timeout
 * and a slow tool's streamed answer is not cut.
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
async function closedByServer(conn: Deno.Conn, boundMs = BOUND_MS): Promise<"closed" | "open"> {
  const bound = setTimeout(() => conn.close(), boundMs);
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
    const ends = Promise.all([silent, halfHeader, keptAlive].map((conn) => closedByServer(conn)));

    // A slow tool answering on an SSE stream for well past both timeouts is answered in full.
    const slow = post(
      server.url.href,
      request2026(7, "tools/call", {
        name: "test_slow_operation",
        arguments: { seconds: (TIMEOUT_MS * 4) / 1000 },
      }, { progressToken: "slow" }),
      headers2026("tools/call", "test_slow_operation"),
    ).then(async (response) => {
      const messages = await new SseReader(response).rest();
      return messages.at(-1);
    });

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
    const answer = await slow as { id: number; result: { content: { text: string }[] } };
    assert.equal(answer.id, 7);
    assert.equal(
      answer.result.content[0].text,
      `compute finished after ${TIMEOUT_MS * 4 / 1000} s`,
    );
  } finally {
    const { code, stderr } = await server.stop();
    assert.equal(code, 0, stderr);
  }
});

Deno.test("http timeouts: with no flag, a silent and a half-sent connection are closed by the default header timeout", async () => {
  const server = await startHttpServer();
  const port = Number(server.url.port);
  try {
    const silent = await Deno.connect({ hostname: "127.0.0.1", port });
    const halfHeader = await Deno.connect({ hostname: "127.0.0.1", port });
    await halfHeader.write(
      new TextEncoder().encode(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`),
    );
    // The default is 10 s: the bound of 10 s more only says the test ends.
    const ends = await Promise.all(
      [silent, halfHeader].map((conn) => closedByServer(conn, 20_000)),
    );
    assert.deepEqual(ends, ["closed", "closed"]);
    // And a client is served as before.
    const called = await post(
      server.url.href,
      request2026(1, "tools/call", { name: "test_simple_text", arguments: {} }),
      headers2026("tools/call", "test_simple_text"),
    );
    assert.equal(called.status, 200);
    assert.ok((await called.json()).result);
  } finally {
    const { code, stderr } = await server.stop();
    assert.equal(code, 0, stderr);
  }
});

Deno.test("http timeouts: a large body is read and a slow one gets the body timeout's 408, not the idle timeout", async () => {
  const server = await startHttpServer([
    "--header-timeout",
    "500",
    "--idle-timeout",
    "300",
    "--body-timeout",
    "1000",
  ]);
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
    let closed = false;
    const buffer = new Uint8Array(4096);
    const bound = setTimeout(() => slow.close(), BOUND_MS);
    try {
      for (let n = await slow.read(buffer); n !== null; n = await slow.read(buffer)) {
        answer += new TextDecoder().decode(buffer.subarray(0, n));
      }
      closed = true;
    } catch (error) {
      // Reset by the server, or closed at the bound: the assertion below says which.
      closed = error instanceof Deno.errors.ConnectionReset;
    } finally {
      clearTimeout(bound);
    }
    assert.match(answer, /^HTTP\/1\.1 408 /);
    // Answered, the connection held for the rest of a body that never comes is closed
    // by the idle timeout (nothing is in progress on it any more).
    assert.ok(closed, "the connection stayed open after its 408");
  } finally {
    const { code, stderr } = await server.stop();
    assert.equal(code, 0, stderr);
  }
});
