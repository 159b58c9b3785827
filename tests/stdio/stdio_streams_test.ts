/**
 * `serveStdio` in process on streams the test makes, a byte stream and a
 * plain one, fed lines cut anywhere, several lines per chunk, and long lines
 * over many reads. (Deno's own stdin, read into one reused buffer, is
 * covered over real pipes in the other stdio tests.)
 */

import assert from "node:assert/strict";
import { defineServer } from "@anubis/core";
import { serveStdio } from "@anubis/transport-stdio";
import { captureLog } from "../helpers/log_capture.ts";

const server = defineServer({
  name: "streams",
  version: "1.0.0",
  tools: [{
    name: "echo",
    inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    handler: ({ text }: { text: string }) => text,
  }],
});

const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
};

/** Calls whose texts differ in length and script, so a stale byte would show. */
function calls(): { lines: string; texts: Map<number, string> } {
  const texts = new Map<number, string>();
  let lines = "";
  for (let id = 1; id <= 60; id++) {
    const text = `${id}:` + (id % 3 === 0 ? "é😀".repeat(id * 50) : "x".repeat(id * 700));
    texts.set(id, text);
    const params = { name: "echo", arguments: { text }, _meta: META };
    lines += JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params }) + "\n";
  }
  return { lines, texts };
}

/** Cuts the bytes into chunks of sizes that cycle through odd lengths. */
function cut(bytes: Uint8Array): Uint8Array[] {
  const sizes = [1, 7, 300, 4096, 65_537, 13, 100_000];
  const chunks: Uint8Array[] = [];
  for (let at = 0, i = 0; at < bytes.length; i++) {
    const size = sizes[i % sizes.length];
    chunks.push(bytes.slice(at, at + size));
    at += size;
  }
  return chunks;
}

async function serveAll(bytes: boolean): Promise<void> {
  const { lines, texts } = calls();
  const chunks = cut(new TextEncoder().encode(lines));
  const readable = new ReadableStream<Uint8Array>(
    bytes
      ? {
        type: "bytes",
        // A source written for default readers: it never answers a BYOB
        // request, so a BYOB read pending at its close would wait forever.
        pull: (controller) => {
          const chunk = chunks.shift();
          if (chunk) controller.enqueue(chunk);
          else controller.close();
        },
      }
      : {
        pull: (controller) => {
          const chunk = chunks.shift();
          if (chunk) controller.enqueue(chunk);
          else controller.close();
        },
      },
  );
  const decoder = new TextDecoder();
  let output = "";
  const writable = new WritableStream<Uint8Array>({
    write: (chunk) => void (output += decoder.decode(chunk, { stream: true })),
  });
  await serveStdio(server, { readable, writable, redirectConsole: false });
  const answers = output.trim().split("\n").map((line) => JSON.parse(line));
  assert.equal(answers.length, texts.size);
  for (const answer of answers) {
    assert.equal(answer.result?.content[0].text, texts.get(answer.id), `answer ${answer.id}`);
  }
}

Deno.test("serveStdio: a byte stream the caller passes is read as chunks, to its end, and its lines cut anywhere are answered whole", async () => {
  await serveAll(true);
});

Deno.test("serveStdio: a stream that is not a byte stream is read chunk by chunk, with the same answers", async () => {
  await serveAll(false);
});

Deno.test("serveStdio: an input that fails ends serving as at end of input, and the log says why", async () => {
  const log = captureLog();
  try {
    const encoder = new TextEncoder();
    let pulls = 0;
    const readable = new ReadableStream<Uint8Array>({
      pull: (controller) => {
        if (pulls++ === 0) {
          controller.enqueue(encoder.encode('{"jsonrpc":"2.0","id":1,"method":"ping"}\n'));
        } else controller.error(new Error("the pipe broke"));
      },
    });
    const written: string[] = [];
    const writable = new WritableStream<Uint8Array>({
      write: (chunk) => void written.push(new TextDecoder().decode(chunk)),
    });
    await serveStdio(server, { readable, writable, redirectConsole: false });
    assert.deepEqual(
      written,
      ['{"jsonrpc":"2.0","id":1,"result":{}}\n'],
      "the line before is answered",
    );
    const failed = log.records().find((record) => record.event === "stdio.input_failed");
    assert.ok(failed, log.lines.join("\n"));
    assert.equal(failed.level, "error");
    assert.match(String(failed.error), /the pipe broke/);
  } finally {
    log.restore();
  }
});
