/**
 * End-to-end tests of the transport's defences: Origin and Host validation,
 * body and media-type checks, malformed input answered with the right
 * JSON-RPC code, and a server that keeps serving afterwards.
 */

import assert from "node:assert/strict";
import { headers2026, post, request2026, start, type TestServer } from "../helpers/http_helpers.ts";

async function discover(server: TestServer, headers: Record<string, string> = {}) {
  return await post(server.url, request2026(1, "server/discover"), {
    ...headers2026("server/discover"),
    ...headers,
  });
}

async function expectStatus(response: Response, status: number): Promise<Record<string, unknown>> {
  const text = await response.text();
  assert.equal(response.status, status, text);
  return response.headers.get("content-type") === "application/json" ? JSON.parse(text) : {};
}

/** Sends a raw HTTP/1.1 request (fetch cannot set Host) and returns the status code. */
async function rawStatus(server: TestServer, headers: Record<string, string>): Promise<number> {
  const { port } = new URL(server.url);
  const body = JSON.stringify(request2026(1, "server/discover"));
  const lines = [
    "POST /mcp HTTP/1.1",
    "content-type: application/json",
    `content-length: ${new TextEncoder().encode(body).byteLength}`,
    "connection: close",
    ...Object.entries({ ...headers2026("server/discover"), ...headers }).map(([k, v]) =>
      `${k}: ${v}`
    ),
  ];
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: Number(port) });
  await conn.write(new TextEncoder().encode(lines.join("\r\n") + "\r\n\r\n" + body));
  const text = await new Response(conn.readable).text();
  return Number(text.split(" ")[1]);
}

Deno.test("http security: Origin and Host are validated, loopback by default", async (t) => {
  const server = start();
  try {
    await t.step("a foreign Origin is 403 with a JSON-RPC body without id", async () => {
      const body = await expectStatus(
        await discover(server, { origin: "http://evil.example.com" }),
        403,
      );
      assert.equal(body.id, null);
      assert.equal((body.error as { code: number }).code, -32600);
    });
    await t.step("a foreign Host is 421 (DNS rebinding)", async () => {
      assert.equal(await rawStatus(server, { host: "evil.example.com" }), 421);
      assert.equal(
        await rawStatus(server, { host: "evil.example.com", origin: "http://evil.example.com" }),
        403,
      );
      assert.equal(await rawStatus(server, { host: "localhost:1234" }), 200);
      assert.equal(await rawStatus(server, { host: "[::1]:1234" }), 200);
    });
    await t.step("loopback Origins and no Origin pass", async () => {
      await expectStatus(await discover(server, { origin: "http://localhost:5173" }), 200);
      await expectStatus(await discover(server, { origin: "http://127.0.0.1:9" }), 200);
      await expectStatus(await discover(server), 200);
    });
  } finally {
    await server.close();
  }
});

Deno.test("http security: allow-lists extend the defaults", async () => {
  const server = start({
    allowedOrigins: ["https://app.example.com"],
    allowedHosts: ["mcp.example.com"],
  });
  try {
    assert.equal(
      await rawStatus(server, { origin: "https://app.example.com", host: "mcp.example.com:443" }),
      200,
    );
    await expectStatus(await discover(server, { origin: "https://other.example.com" }), 403);
    assert.equal(await rawStatus(server, { host: "other.example.com" }), 421);
  } finally {
    await server.close();
  }
});

Deno.test("http security: malformed requests get clear 4xx answers and the server keeps serving", async (t) => {
  const server = start({ maxBodyBytes: 512 });
  try {
    await t.step("bad JSON: 400 -32700 with id null", async () => {
      const body = await expectStatus(await post(server.url, '{"jsonrpc":"2.0","id":1,'), 400);
      assert.deepEqual(body, {
        jsonrpc: "2.0",
        id: null,
        error: { code: -32700, message: "Parse error" },
      });
    });
    await t.step("bytes that are not UTF-8 JSON: 400 -32700", async () => {
      const response = await fetch(server.url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: new Uint8Array([0x7b, 0xff, 0x7d]),
      });
      assert.equal(((await expectStatus(response, 400)).error as { code: number }).code, -32700);
    });
    await t.step("wrong member types: 400 -32600 with the id echoed", async () => {
      const body = await expectStatus(
        await post(server.url, { jsonrpc: "2.0", id: 5, method: 42 }),
        400,
      );
      assert.equal(body.id, 5);
      assert.equal((body.error as { code: number }).code, -32600);
      const params = await expectStatus(
        await post(server.url, { jsonrpc: "2.0", id: 6, method: "tools/list", params: [1] }),
        400,
      );
      assert.equal(params.id, 6);
    });
    await t.step(
      "a body that starts with a byte order mark: 400 -32700, announced or not",
      async () => {
        const bytes = new TextEncoder().encode('\uFEFF{"jsonrpc":"2.0","id":1,"method":"ping"}');
        assert.equal(bytes[0], 0xef); // the BOM is on the wire
        for (const body of [bytes, ReadableStream.from([bytes])]) {
          const response = await fetch(server.url, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body,
          });
          const answer = await expectStatus(response, 400);
          assert.deepEqual(answer.error, { code: -32700, message: "Parse error" });
        }
      },
    );
    await t.step("a client that leaves mid-body is no server failure: nothing logged", async () => {
      const logged: unknown[][] = [];
      const error = console.error;
      console.error = (...args: unknown[]) => void logged.push(args);
      try {
        const { port } = new URL(server.url);
        const conn = await Deno.connect({ hostname: "127.0.0.1", port: Number(port) });
        const head = [
          "POST /mcp HTTP/1.1",
          "host: 127.0.0.1",
          "content-type: application/json",
          "content-length: 400",
        ].join("\r\n");
        await conn.write(new TextEncoder().encode(head + "\r\n\r\n" + '{"jsonrpc":"2.0",'));
        await new Promise((resolve) => setTimeout(resolve, 50)); // the server starts reading
        conn.close();
        await new Promise((resolve) => setTimeout(resolve, 100)); // and finds the body cut short
      } finally {
        console.error = error;
      }
      assert.deepEqual(logged, []);
      await expectStatus(await discover(server), 200); // still serving
    });
    await t.step("a body over the limit: 413", async () => {
      const big = request2026(2, "tools/call", {
        name: "echo",
        arguments: { text: "x".repeat(600) },
      });
      await expectStatus(await post(server.url, big, headers2026("tools/call", "echo")), 413);
      const chunked = await fetch(server.url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: ReadableStream.from([new TextEncoder().encode("[" + " ".repeat(600) + "]")]),
      });
      await expectStatus(chunked, 413);
    });
    await t.step("a body that is not JSON: 415", async () => {
      const response = await fetch(server.url, {
        method: "POST",
        headers: { "content-type": "text/plain" },
        body: "{}",
      });
      await expectStatus(response, 415);
    });
    await t.step("another method: 405 with Allow; another path: 404", async () => {
      const put = await fetch(server.url, { method: "PUT", body: "{}" });
      assert.equal(put.headers.get("allow"), "GET, POST, DELETE");
      await expectStatus(put, 405);
      await expectStatus(await fetch(server.url.replace("/mcp", "/other")), 404);
    });
    await t.step("a POSTed response without a session: 400", async () => {
      await expectStatus(await post(server.url, { jsonrpc: "2.0", id: 1, result: {} }), 400);
    });
    await t.step("the server still answers", async () => {
      const body = await expectStatus(await discover(server), 200);
      assert.equal(body.id, 1);
    });
  } finally {
    await server.close();
  }
});
