/**
 * The request bodies being read at once are bounded by default: one client's
 * hold at most 64 MiB (429 with `Retry-After` beyond) and every client's 256
 * MiB (503). A real `cli serve examples/everything.ts --http` child (only
 * `--host ::`, so 127.0.0.1 and [::1] are two clients) and a handler with the
 * default options (a middleware naming four clients), raw sockets that send
 * all but the last byte of 4 MiB bodies (an announced body takes its length
 * before it is read): past the bound a new body is refused, another client's
 * body and small requests are served, and the bytes return when the bodies
 * end. A chunked body takes its share as it arrives (a handler with a small
 * budget).
 */

import assert from "node:assert/strict";
import { createHttpHandler } from "@anubis/transport-http";
import { startCli } from "../helpers/everything_http_server.ts";
import { initializeRequest, post, testServer } from "../helpers/http_helpers.ts";

const MiB = 1024 * 1024;

/** The head of a POST announcing `length` bytes. */
const postHead = (port: string, length: number, extra: string) =>
  new TextEncoder().encode(
    `POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\n` +
      // A stateless request's header: the body may be as large as maxBodyBytes
      // (one without it nor Mcp-Session-Id could only be an initialize).
      `accept: application/json, text/event-stream\r\nmcp-method: tools/call\r\n${extra}` +
      `content-length: ${length}\r\n\r\n`,
  );

/**
 * A body held open: all of it but its last byte is sent (`sent` resolves once
 * written, or once the server closed the connection); `answer` is what the
 * server answered, if anything.
 */
interface Held {
  socket: Deno.Conn;
  answer: Promise<string>;
  sent: Promise<void>;
}

async function hold(
  hostname: string,
  port: string,
  length: number,
  filler: Uint8Array,
  extra = "",
): Promise<Held> {
  const socket = await Deno.connect({ hostname, port: Number(port) });
  await socket.write(postHead(port, length, extra));
  const answer = (async () => {
    const buffer = new Uint8Array(4096);
    try {
      const read = await socket.read(buffer);
      return read === null ? "closed" : new TextDecoder().decode(buffer.subarray(0, read));
    } catch {
      return "closed";
    }
  })();
  // A refused body's writes end when the server closes.
  const sent = (async () => {
    try {
      let offset = 0;
      while (offset < length - 1) offset += await socket.write(filler.subarray(offset, length - 1));
    } catch {
      // Refused mid-body: the server closed the connection.
    }
  })();
  return { socket, answer, sent };
}

/** An `initialize` carrying `bytes` of padding in a field the server drops (the body is read whole). */
function paddedInitialize(id: number, bytes: number): string {
  const request = initializeRequest(id);
  (request.params as Record<string, unknown>).padding = "p".repeat(bytes);
  return JSON.stringify(request);
}

Deno.test("http body budget: by default one client's bodies being read hold at most 64 MiB (429 with Retry-After beyond), another client's body and a small request are served, and the share returns when they end", async () => {
  const server = await startCli("examples/everything.ts", ["--port", "0", "--host", "::"]);
  const port = server.url.port;
  const held: Held[] = [];
  try {
    const length = 4 * MiB - 1;
    const filler = new Uint8Array(length).fill(0x20);
    filler[0] = 0x5b; // "[", never closed: the body is not JSON until its last byte
    // An announced body takes its length before it is read: 64 MiB / (4 MiB - 1)
    // = 16 bodies of 127.0.0.1 fit, and the 2 others are refused before a byte is read.
    const refused: string[] = [];
    for (let i = 0; i < 18; i++) {
      const body = await hold("127.0.0.1", port, length, filler);
      held.push(body);
      body.answer.then((answer) => void refused.push(answer));
      await body.sent;
    }
    // Bounded: the refusals come at once; the held bodies answer 408 only at 30 s.
    const deadline = Date.now() + 20_000;
    while (refused.length < 2 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(refused.length, 2, refused.join("\n"));
    for (const answer of refused) {
      assert.match(answer, /^HTTP\/1\.1 429 /);
      assert.match(answer, /\r\nretry-after: 1\r\n/i);
      assert.match(answer, /\r\nconnection: close\r\n/i);
      assert.match(answer, /this client's request bodies being read hold 67108864 bytes already/);
    }
    // Another client's large body is read and answered meanwhile.
    const other = await post(`http://[::1]:${port}/mcp`, paddedInitialize(2, 768 * 1024));
    assert.equal(other.status, 200);
    await other.body?.cancel();
    // The first client's small requests are served too.
    const small = await post(`http://127.0.0.1:${port}/mcp`, initializeRequest(1));
    assert.equal(small.status, 200);
    await small.body?.cancel();

    // The held bodies end (their client leaves): their bytes are given back.
    for (const body of held) body.socket.close();
    held.length = 0;
    let status = 0;
    for (let attempt = 0; attempt < 50 && status !== 200; attempt++) {
      const retry = await post(`http://127.0.0.1:${port}/mcp`, paddedInitialize(3, 768 * 1024));
      status = retry.status;
      await retry.body?.cancel();
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(status, 200);
  } finally {
    for (const body of held) {
      try {
        body.socket.close();
      } catch {
        // Closed by the server.
      }
    }
    await server.stop();
  }
});

Deno.test("http body budget: a chunked body takes its share as it arrives, and is refused with 503 once it does not fit", async () => {
  const handler = createHttpHandler(testServer(), { keepAliveMs: 0, maxBodyBytesInFlight: MiB });
  const served = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, handler);
  const port = String(served.addr.port);
  const url = `http://127.0.0.1:${port}/mcp`;
  const chunked = (bytes: number) => {
    const body = new TextEncoder().encode(paddedInitialize(4, bytes));
    return fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: new ReadableStream<Uint8Array>({
        start(controller) {
          for (let offset = 0; offset < body.byteLength; offset += 64 * 1024) {
            controller.enqueue(body.subarray(offset, offset + 64 * 1024));
          }
          controller.close();
        },
      }),
    });
  };
  let holder: Held | undefined;
  try {
    // Unannounced and within the budget: read whole.
    const fits = await chunked(512 * 1024);
    assert.equal(fits.status, 200);
    await fits.body?.cancel();
    // An announced body holds 700 KiB of the 1 MiB.
    const filler = new Uint8Array(700 * 1024).fill(0x20);
    filler[0] = 0x5b;
    holder = await hold("127.0.0.1", port, filler.byteLength + 1, filler);
    await holder.sent;
    // Bounded wait until the held body's bytes were read.
    const deadline = Date.now() + 10_000;
    let refusedStatus = 0;
    while (Date.now() < deadline) {
      const refused = await chunked(512 * 1024);
      refusedStatus = refused.status;
      const text = await refused.text();
      if (refusedStatus === 503) {
        assert.equal(refused.headers.get("retry-after"), "1");
        assert.match(text, /the request bodies being read hold 1048576 bytes already/);
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal(refusedStatus, 503);
    holder.socket.close();
    holder = undefined;
    let status = 0;
    for (let attempt = 0; attempt < 50 && status !== 200; attempt++) {
      const again = await chunked(512 * 1024);
      status = again.status;
      await again.body?.cancel();
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal(status, 200);
  } finally {
    holder?.socket.close();
    handler.close();
    await served.shutdown();
  }
});

Deno.test("http body budget: by default the bodies of every client being read hold at most 256 MiB: past it 503 with Retry-After, while a small request is served", async () => {
  // Default options; a middleware names the client from a header, as one behind a proxy would.
  const handler = createHttpHandler(testServer(), { keepAliveMs: 0 });
  const served = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (request) => handler(request, { client: request.headers.get("x-client") ?? "none" }),
  );
  const port = String(served.addr.port);
  const held: Held[] = [];
  try {
    const length = 4 * MiB - 1;
    const filler = new Uint8Array(length).fill(0x20);
    filler[0] = 0x5b;
    // Four clients at their 64 MiB share: 64 bodies, 256 MiB - 64 bytes.
    for (let i = 0; i < 64; i++) {
      const body = await hold("127.0.0.1", port, length, filler, `x-client: c${i % 4}\r\n`);
      held.push(body);
      await body.sent;
    }
    const fifth = await hold("127.0.0.1", port, length, filler, "x-client: c5\r\n");
    held.push(fifth);
    const answer = await fifth.answer;
    assert.match(answer, /^HTTP\/1\.1 503 /);
    assert.match(answer, /\r\nretry-after: 1\r\n/i);
    assert.match(answer, /the request bodies being read hold 268435456 bytes already/);
    const small = await post(`http://127.0.0.1:${port}/mcp`, initializeRequest(1), {
      "x-client": "c6",
    });
    assert.equal(small.status, 200);
    await small.body?.cancel();
  } finally {
    for (const body of held) {
      try {
        body.socket.close();
      } catch {
        // Closed by the server.
      }
    }
    handler.close();
    await served.shutdown();
  }
});
