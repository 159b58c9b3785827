/**
 * What a legacy session retains of its client's data is bounded by default:
 * a real `cli serve examples/everything.ts --http` child (no flags) on
 * loopback refuses an `initialize` (or a subscription) over the per-session
 * bound with -32602, and a client that floods sessions with large (allowed)
 * capabilities stops at its share while another client still opens one. The
 * total budget is checked on a handler with a small one, served on loopback.
 */

import assert from "node:assert/strict";
import { createHttpHandler } from "@anubis/transport-http";
import { startCli } from "../helpers/everything_http_server.ts";
import {
  initialize,
  initializeRequest,
  post,
  SseReader,
  testServer,
} from "../helpers/http_helpers.ts";
import { retainedBytes } from "../../transport-http/_byte_budgets.ts";

const KiB = 1024, MiB = 1024 * KiB;

/** The everything example on `--host ::`, so 127.0.0.1 and [::1] are two clients. */
async function startDualStack() {
  const server = await startCli("examples/everything.ts", ["--port", "0", "--host", "::"]);
  const port = server.url.port;
  return {
    ...server,
    first: `http://127.0.0.1:${port}/mcp`,
    second: `http://[::1]:${port}/mcp`,
  };
}

/** Capabilities whose retained estimate is a little under `bytes`. */
function capabilitiesOf(bytes: number): Record<string, unknown> {
  return { experimental: { padding: "x".repeat(Math.floor((bytes - 300) / 2)) } };
}

Deno.test("http retained: an initialize holding more than a session may is refused with -32602 and its id (over 1 MiB, 413 unread); a normal one, and small subscriptions, are served", async () => {
  const server = await startCli("examples/everything.ts", ["--port", "0"]);
  const url = server.url.href;
  try {
    // ~4 MB of capabilities.experimental: under the body bound, but an
    // initialize may carry at most 1 MiB: refused before it is read.
    const huge = await post(url, initializeRequest(40, "2025-11-25", capabilitiesOf(8_000_000)));
    assert.equal(huge.status, 413);
    const tooLarge = await huge.json();
    assert.equal(tooLarge.error.code, -32600);
    assert.match(
      tooLarge.error.message,
      /without Mcp-Session-Id \(an initialize\) may carry at most 1048576 bytes/,
    );
    // ~400 KB of capabilities: read, and over what a session may retain.
    const big = await post(url, initializeRequest(41, "2025-11-25", capabilitiesOf(800_000)));
    assert.equal(big.status, 400);
    const refused = await big.json();
    assert.equal(refused.id, 41);
    assert.equal(refused.error.code, -32602);
    assert.match(refused.error.message, /may hold at most 65536 bytes/);
    assert.equal(big.headers.get("mcp-session-id"), null);
    // Just over the default 64 KiB, in clientInfo this time.
    const over = await post(url, {
      ...initializeRequest(42),
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "n".repeat(33 * KiB), version: "1" },
      },
    });
    assert.equal(over.status, 400);
    assert.equal((await over.json()).error.code, -32602);

    // Under it: served.
    const session = await initialize(url, "2025-11-25", capabilitiesOf(32 * KiB));
    const headers = { "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" };
    const subscribe = (id: number, uri: string) =>
      post(url, { jsonrpc: "2.0", id, method: "resources/subscribe", params: { uri } }, headers);
    const small = await subscribe(2, "test://watched-resource");
    assert.deepEqual(await small.json(), { jsonrpc: "2.0", id: 2, result: {} });
    // A subscription that would take the session past its bound is refused.
    const long = await subscribe(3, `test://${"u".repeat(20 * KiB)}`);
    const answer = await long.json();
    assert.equal(answer.id, 3);
    assert.equal(answer.error?.code, -32602, JSON.stringify(answer));
    assert.match(answer.error.message, /more than 65536 bytes/);
    // The session still answers.
    const call = await post(url, {
      jsonrpc: "2.0",
      id: 4,
      method: "tools/call",
      params: { name: "test_simple_text", arguments: {} },
    }, headers);
    assert.equal(call.status, 200);
    assert.equal((await call.json()).id, 4);
  } finally {
    await server.stop();
  }
});

Deno.test("http retained: sessions with large allowed capabilities from one client stop at its 16 MiB share (429, Retry-After, id), and another client still opens one", async () => {
  const server = await startDualStack();
  try {
    const capabilities = capabilitiesOf(60 * KiB);
    const perSession = retainedBytes(capabilities, Infinity) +
      retainedBytes({ name: "raw", version: "0" }, Infinity);
    const share = Math.floor(16 * MiB / perSession); // the default per-client share
    const statuses = new Map<number, number>();
    let last: Response | undefined;
    // Bounded: at most share + 20 handshakes.
    for (let i = 1; i <= share + 20; i++) {
      const response = await post(server.first, initializeRequest(i, "2025-11-25", capabilities));
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      const session = response.headers.get("mcp-session-id");
      if (response.status !== 200) {
        last = response;
        break;
      }
      await response.body?.cancel();
      // Finished handshakes: nothing the client holds may be evicted for it.
      const done = await post(server.first, {
        jsonrpc: "2.0",
        method: "notifications/initialized",
      }, { "mcp-session-id": session! });
      await done.body?.cancel();
    }
    assert.equal(statuses.get(200), share, JSON.stringify([...statuses]));
    assert.equal(last?.status, 429);
    assert.ok(Number(last!.headers.get("retry-after")) >= 1);
    const body = await last!.json();
    assert.equal(body.id, share + 1);
    assert.match(body.error.message, /Too much session data for this client/);

    // Another client (another address) is served, with the same large capabilities.
    const other = await post(server.second, initializeRequest(7, "2025-11-25", capabilities));
    assert.equal(other.status, 200);
    assert.ok(other.headers.get("mcp-session-id"));
    await other.body?.cancel();
    // The share is in bytes: a small session of the first client still fits in what is left.
    assert.ok(16 * MiB - share * perSession < perSession);
    const small = await post(server.first, initializeRequest(8));
    assert.equal(small.status, 200);
    await small.body?.cancel();
  } finally {
    await server.stop();
  }
});

Deno.test("http retained: over the total budget an initialize gets 503 with Retry-After and its id, and ending a session makes room", async () => {
  const handler = createHttpHandler(testServer(), {
    keepAliveMs: 0,
    maxSessionBytesTotal: 256 * KiB,
  });
  const served = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, handler);
  const url = `http://127.0.0.1:${served.addr.port}/mcp`;
  try {
    const capabilities = capabilitiesOf(60 * KiB);
    const sessions: string[] = [];
    for (let i = 0; i < 4; i++) sessions.push(await initialize(url, "2025-11-25", capabilities));
    const full = await post(url, initializeRequest(9, "2025-11-25", capabilities));
    assert.equal(full.status, 503);
    assert.ok(Number(full.headers.get("retry-after")) >= 1);
    const body = await full.json();
    assert.equal(body.id, 9);
    assert.match(
      body.error.message,
      /Too much session data: the server's sessions may retain 262144 bytes/,
    );
    const ended = await fetch(url, {
      method: "DELETE",
      headers: { "mcp-session-id": sessions[0] },
    });
    await ended.body?.cancel();
    assert.equal(ended.status, 200);
    await initialize(url, "2025-11-25", capabilities);
  } finally {
    handler.close();
    await served.shutdown();
  }
});

Deno.test("http retained: at most 100 sampling requests wait for one session's client; one more tool call that samples is answered -32603, and the others still get theirs", async () => {
  const server = await startCli("examples/everything.ts", ["--port", "0"]);
  const url = server.url.href;
  const readers: SseReader[] = [];
  try {
    const session = await initialize(url, "2025-06-18", { sampling: {} });
    const headers = { "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" };
    const call = (id: number) =>
      post(url, {
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: { name: "test_missing_capability", arguments: {} },
      }, headers);
    // 101 tool calls at once, each asking the client to sample (bounded: 101).
    const responses = await Promise.all(Array.from({ length: 101 }, (_, i) => call(i + 1)));
    const readerOf = new Map<unknown, SseReader>();
    const firsts = await Promise.all(responses.map(async (response) => {
      if (!response.headers.get("content-type")?.startsWith("text/event-stream")) {
        return await response.json();
      }
      const reader = new SseReader(response);
      readers.push(reader);
      const first = JSON.parse((await reader.next())?.data ?? "null");
      readerOf.set(first, reader);
      return first;
    }));
    const asked = firsts.filter((message) => message?.method === "sampling/createMessage");
    const refused = firsts.filter((message) => message?.method === undefined);
    assert.equal(asked.length, 100, JSON.stringify(refused));
    assert.equal(refused.length, 1);
    const text = JSON.stringify(refused[0]);
    assert.match(text, /Too many requests waiting for the client's answer: at most 100 at once/);
    // A waiting call still gets its answer once the client samples.
    const answered = await post(url, {
      jsonrpc: "2.0",
      id: asked[0].id,
      result: { role: "assistant", content: { type: "text", text: "Paris" }, model: "m" },
    }, headers);
    assert.equal(answered.status, 202);
    await answered.body?.cancel();
    const reader = readerOf.get(asked[0])!;
    const result = JSON.parse((await reader.next())!.data!);
    assert.equal(result.result?.content?.[0]?.text, "Sampled: Paris", JSON.stringify(result));
    const ended = await fetch(url, { method: "DELETE", headers });
    await ended.body?.cancel();
  } finally {
    await Promise.all(readers.map((reader) => reader.cancel().catch(() => {})));
    await server.stop();
  }
});
