/**
 * The request bodies being read at once hold at most their budget (default
 * 256 MiB): a real `cli serve examples/everything.ts --http` child (no
 * flags) on loopback, raw sockets that send all but the last byte of 4 MiB
 * bodies; past the budget a new body gets 503 with `Retry-After`, a small
 * request is served meanwhile, and the budget returns when the bodies end. A
 * chunked body takes its share as it arrives (a handler with a small budget).
 */

import assert from "node:assert/strict";
import { createHttpHandler } from "@anubis/transport-http";
import { startCli } from "../helpers/everything_http_server.ts";
import { initializeRequest, post, testServer } from "../helpers/http_helpers.ts";

const MiB = 1024 * 1024;

/** The head of a POST announcing `length` bytes. */
const postHead = (port: string, length: number) =>
  new TextEncoder().encode(
    `POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\n` +
      `accept: application/json, text/event-stream\r\ncontent-length: ${length}\r\n\r\n`,
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

async function hold(port: string, length: number, filler: Uint8Array): Promise<Held> {
  const socket = await Deno.connect({ hostname: "127.0.0.1", port: Number(port) });
  await socket.write(postHead(port, length));
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

Deno.test("http body budget: by default 64 bodies of 4 MiB are read at once, the next ones get 503 with Retry-After, a small request is served, and the budget returns when they end", async () => {
  const server = await startCli("examples/everything.ts", ["--port", "0"]);
  const port = server.url.port;
  const held: Held[] = [];
  try {
    const length = 4 * MiB - 1;
    const filler = new Uint8Array(length).fill(0x20);
    filler[0] = 0x5b; // "[", never closed: the body is not JSON until its last byte
    // 256 MiB / (4 MiB - 2 bytes received) = 64 bodies fit, so at least 6
    // are refused. A body takes its share as its bytes arrive, so one
    // arriving while another is still arriving may be refused in its place:
    // the bodies are sent one after the other, and a few more refusals are
    // allowed for that.
    const refused: string[] = [];
    for (let i = 0; i < 70; i++) {
      const body = await hold(port, length, filler);
      held.push(body);
      body.answer.then((answer) => void refused.push(answer));
      await body.sent;
    }
    // Bounded: the refusals come as the bodies arrive; the held ones answer 408 only at 30 s.
    const deadline = Date.now() + 20_000;
    while (refused.length < 6 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.ok(refused.length >= 6 && refused.length <= 12, `${refused.length} refused`);
    for (const answer of refused) {
      assert.match(answer, /^HTTP\/1\.1 503 /);
      assert.match(answer, /\r\nretry-after: 1\r\n/i);
      assert.match(answer, /\r\nconnection: close\r\n/i);
      assert.match(answer, /the request bodies being read hold 268435456 bytes already/);
    }
    // A small request is served while the budget is full.
    const small = await post(server.url.href, initializeRequest(1));
    assert.equal(small.status, 200);
    await small.body?.cancel();
    // And a body over 16 KiB is refused for now.
    const big = await post(server.url.href, paddedInitialize(2, 1 * MiB));
    assert.equal(big.status, 503);
    await big.body?.cancel();

    // The held bodies end (their clients leave): their bytes are given back.
    for (const body of held) body.socket.close();
    held.length = 0;
    let status = 0;
    for (let attempt = 0; attempt < 50 && status !== 200; attempt++) {
      const retry = await post(server.url.href, paddedInitialize(3, 1 * MiB));
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
    holder = await hold(port, filler.byteLength + 1, filler);
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
