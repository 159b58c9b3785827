/**
 * A standalone GET stream whose client stops reading, over real HTTP: the
 * server ends it once its unread budget (4 MiB, packed in 64 KiB blocks) is
 * spent instead of holding every event, and keeps serving meanwhile.
 */

import assert from "node:assert/strict";
import { defineServer } from "@anubis/core";
import { headers2026, initialize, post, request2026, start } from "../helpers/http_helpers.ts";

/** Change notifications raised by one call: ~21 MB of SSE, past any socket buffer. */
const CHANGES = 300_000;

const server = defineServer({
  name: "flood",
  version: "1.0.0",
  tools: [{
    name: "flood",
    handler: () => {
      for (let i = 0; i < CHANGES; i++) server.notify.toolsListChanged();
      return "raised";
    },
  }, {
    name: "ping_tool",
    handler: () => "pong",
  }],
});

Deno.test("http: a GET stream whose client stops reading is ended past its unread budget; serving goes on", async () => {
  const http = start({}, server);
  const url = new URL(http.url);
  try {
    const session = await initialize(http.url);
    // The stream's client: a raw socket that sends the GET and then reads nothing.
    const socket = await Deno.connect({ hostname: "127.0.0.1", port: Number(url.port) });
    await socket.write(
      new TextEncoder().encode(
        `GET /mcp HTTP/1.1\r\nHost: ${url.host}\r\naccept: text/event-stream\r\n` +
          `mcp-session-id: ${session}\r\nmcp-protocol-version: 2025-11-25\r\n\r\n`,
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 200)); // the stream is open

    const flood = await post(http.url, {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "flood", arguments: {} },
    }, { "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" });
    assert.equal(flood.status, 200);
    await flood.body?.cancel();

    // Serving goes on while the stream is held.
    const pong = await post(
      http.url,
      request2026(2, "tools/call", { name: "ping_tool", arguments: {} }),
      headers2026("tools/call", "ping_tool"),
    );
    assert.equal((await pong.json()).result.content[0].text, "pong");

    // Reading now: what the server held, then the end it wrote once the budget was spent.
    let received = 0;
    let ended = false;
    const buffer = new Uint8Array(64 * 1024);
    const bound = setTimeout(() => socket.close(), 20_000);
    try {
      for (let n = await socket.read(buffer); n !== null; n = await socket.read(buffer)) {
        received += n;
        // The chunked body's last chunk: the server ended the stream.
        if (new TextDecoder().decode(buffer.subarray(Math.max(0, n - 5), n)) === "0\r\n\r\n") {
          ended = true;
          break;
        }
      }
    } finally {
      clearTimeout(bound);
      try {
        socket.close();
      } catch {
        // Closed at the bound.
      }
    }
    assert.ok(ended, `the server ended the stream (read ${received} bytes)`);
    const all = CHANGES *
      'data: {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n\n'.length;
    assert.ok(received < all / 2, `held ${received} of ${all} bytes, not every event`);
  } finally {
    await http.close();
  }
});
