/**
 * The body timeout over real HTTP on loopback: clients that announce a body
 * and send one byte (small and large announced lengths, and a chunked body
 * with no length) get 408 once `bodyTimeoutMs` has passed, and the server
 * keeps serving. Raw TCP clients, bounded in count; no timing asserted.
 */

import assert from "node:assert/strict";
import { post, start } from "../helpers/http_helpers.ts";

/** Sends `head` and one byte of body, then reads the answer until the server closes. */
async function slowBody(port: number, head: string, byte: string): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const encoder = new TextEncoder();
  await conn.write(encoder.encode(head + byte));
  let answer = "";
  const decoder = new TextDecoder();
  const buffer = new Uint8Array(4096);
  try {
    for (let n = await conn.read(buffer); n !== null; n = await conn.read(buffer)) {
      answer += decoder.decode(buffer.subarray(0, n));
      if (answer.includes("\r\n\r\n") && answer.includes("Request Timeout")) break;
    }
  } finally {
    conn.close();
  }
  return answer;
}

const headOf = (lengthHeader: string) =>
  `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
  `Accept: application/json, text/event-stream\r\n${lengthHeader}\r\n`;

Deno.test("http body timeout: a body that does not arrive in time is 408, and serving goes on", async () => {
  const server = start({ bodyTimeoutMs: 200 });
  const port = Number(new URL(server.url).port);
  try {
    const answers = await Promise.all([
      slowBody(port, headOf("Content-Length: 1000\r\n"), "{"), // read by json()
      slowBody(port, headOf("Content-Length: 1000000\r\n"), "{"), // read as a stream
      slowBody(port, headOf("Transfer-Encoding: chunked\r\n"), "1\r\n{\r\n"), // no length
    ]);
    for (const answer of answers) {
      assert.match(answer, /^HTTP\/1\.1 408 /, answer);
      assert.match(answer, /"code":-32600/);
      assert.match(answer, /the body did not arrive within 200 ms/);
    }
    const ping = await post(server.url, {
      jsonrpc: "2.0",
      id: 1,
      method: "server/discover",
      params: {
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {},
        },
      },
    }, { "mcp-protocol-version": "2026-07-28", "mcp-method": "server/discover" });
    assert.equal(ping.status, 200);
    await ping.body?.cancel();
  } finally {
    await server.close();
  }
});

Deno.test("http body timeout: 0 turns it off (a body in time is read either way)", async () => {
  const server = start({ bodyTimeoutMs: 0 });
  try {
    const response = await post(server.url, { jsonrpc: "2.0", id: 1, method: "ping" });
    assert.equal(response.status, 400); // no session: read and answered
    await response.body?.cancel();
  } finally {
    await server.close();
  }
});
