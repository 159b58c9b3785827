/**
 * End-to-end tests of the 2026-07-28 era on Streamable HTTP: the header
 * ladder with its exact status codes and bodies, request-scoped SSE,
 * cancellation by disconnect, and `subscriptions/listen`.
 */

import assert from "node:assert/strict";
import {
  headers2026,
  observed,
  post,
  request2026,
  SseReader,
  start,
  type TestServer,
  until,
} from "../helpers/http_helpers.ts";

async function expectError(
  response: Response,
  status: number,
  id: unknown,
  code: number,
): Promise<Record<string, unknown>> {
  const body = await response.json();
  assert.equal(response.status, status, JSON.stringify(body));
  assert.equal(body.id, id);
  assert.equal(body.error.code, code, JSON.stringify(body));
  return body.error;
}

async function withServer(run: (server: TestServer) => Promise<void>, options = {}) {
  const server = start(options);
  try {
    await run(server);
  } finally {
    await server.close();
  }
}

Deno.test("http 2026: server/discover is plain JSON and mints no session", async () => {
  await withServer(async ({ url }) => {
    const response = await post(url, request2026(1, "server/discover"), {
      ...headers2026("server/discover"),
      "mcp-session-id": "ignored",
    });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("content-type"), "application/json");
    assert.equal(response.headers.get("mcp-session-id"), null);
    const body = await response.json();
    assert.equal(body.id, 1);
    assert.ok(body.result.supportedVersions.includes("2026-07-28"));
    assert.equal(body.result.resultType, "complete");
  });
});

Deno.test("http 2026: the header ladder, in the spec's order, with the id echoed", async (t) => {
  await withServer(async ({ url }) => {
    await t.step("header version differs from the body's: -32020 before -32022", async () => {
      const body = request2026(101, "tools/list", {}, {
        "io.modelcontextprotocol/protocolVersion": "v999.0.0",
      });
      await expectError(await post(url, body, headers2026("tools/list")), 400, 101, -32020);
    });
    await t.step("unsupported version in both: -32022 naming what was requested", async () => {
      const body = request2026(102, "tools/list", {}, {
        "io.modelcontextprotocol/protocolVersion": "v999.0.0",
      });
      const error = await expectError(
        await post(url, body, { ...headers2026("tools/list"), "mcp-protocol-version": "v999.0.0" }),
        400,
        102,
        -32022,
      );
      const data = error.data as { supported: string[]; requested: string };
      assert.equal(data.requested, "v999.0.0");
      assert.ok(data.supported.includes("2026-07-28"));
    });
    await t.step("no _meta with a 2026 header: -32602", async () => {
      const body = { jsonrpc: "2.0", id: 103, method: "server/discover", params: {} };
      await expectError(await post(url, body, headers2026("server/discover")), 400, 103, -32602);
    });
    await t.step("a malformed envelope wins over a header problem: -32602", async () => {
      const body = {
        jsonrpc: "2.0",
        id: 104,
        method: "tools/list",
        params: { _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" } },
      };
      await expectError(
        await post(url, body, { "mcp-protocol-version": "2026-07-28" }),
        400,
        104,
        -32602,
      );
    });
    await t.step("Mcp-Method is case-sensitive: -32020", async () => {
      await expectError(
        await post(url, request2026(105, "tools/list"), headers2026("TOOLS/LIST")),
        400,
        105,
        -32020,
      );
    });
    await t.step("missing MCP-Protocol-Version, Mcp-Method or Mcp-Name: -32020", async () => {
      await expectError(
        await post(url, request2026(106, "tools/list"), { "mcp-method": "tools/list" }),
        400,
        106,
        -32020,
      );
      await expectError(
        await post(url, request2026(107, "tools/list"), {
          "mcp-protocol-version": "2026-07-28",
        }),
        400,
        107,
        -32020,
      );
      const callEcho = request2026(108, "tools/call", { name: "echo", arguments: {} });
      await expectError(await post(url, callEcho, headers2026("tools/call")), 400, 108, -32020);
    });
    await t.step("Mcp-Name mismatch: -32020; whitespace and base64 accepted", async () => {
      const callEcho = (id: number) =>
        request2026(id, "tools/call", { name: "echo", arguments: { text: "a" } });
      await expectError(
        await post(url, callEcho(109), headers2026("tools/call", "other")),
        400,
        109,
        -32020,
      );
      const padded = await post(url, callEcho(110), headers2026("tools/call", "  echo  "));
      assert.equal(padded.status, 200);
      assert.equal((await padded.json()).result.content[0].text, "echo: a");
      const encoded = await post(
        url,
        callEcho(111),
        headers2026("tools/call", "=?base64?ZWNobw==?="),
      );
      assert.equal(encoded.status, 200);
      await encoded.body?.cancel();
      await expectError(
        await post(url, callEcho(112), headers2026("tools/call", "=?base64?ZWN*bw==?=")),
        400,
        112,
        -32020,
      );
    });
    await t.step("Mcp-Param-* mirrors x-mcp-header arguments", async () => {
      const body = (id: number, region: string) =>
        request2026(id, "tools/call", { name: "region_echo", arguments: { region } });
      const missing = await expectError(
        await post(url, body(113, "Paris"), headers2026("tools/call", "region_echo")),
        400,
        113,
        -32020,
      );
      // Named as the schema declares it (`x-mcp-header: "Region"`).
      assert.match(missing.message as string, /missing Mcp-Param-Region header/);
      const ok = await post(url, body(114, "Zürich"), {
        ...headers2026("tools/call", "region_echo"),
        "mcp-param-region": `=?base64?${
          btoa(String.fromCharCode(...new TextEncoder().encode("Zürich")))
        }?=`,
      });
      assert.equal(ok.status, 200);
      assert.equal((await ok.json()).result.content[0].text, "region: Zürich");
      const mismatch = await expectError(
        await post(url, body(115, "Paris"), {
          ...headers2026("tools/call", "region_echo"),
          "mcp-param-region": "Lyon",
        }),
        400,
        115,
        -32020,
      );
      assert.match(mismatch.message as string, /Mcp-Param-Region/);
    });
    await t.step("an unknown or removed method: 404 -32601", async () => {
      for (const [id, method] of [[116, "unknown/method"], [117, "ping"], [118, "initialize"]]) {
        await expectError(
          await post(url, request2026(id, method as string), headers2026(method as string)),
          404,
          id,
          -32601,
        );
      }
    });
    await t.step("an undeclared client capability: 400 -32021", async () => {
      const body = request2026(119, "tools/call", { name: "ask", arguments: {} });
      const error = await expectError(
        await post(url, body, headers2026("tools/call", "ask")),
        400,
        119,
        -32021,
      );
      assert.deepEqual((error.data as Record<string, unknown>).requiredCapabilities, {
        elicitation: {},
      });
    });
    await t.step("a notification is 202; a batch is 400 -32600", async () => {
      const note = await post(url, {
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId: 1, _meta: request2026(0, "x").params },
      }, headers2026("notifications/cancelled"));
      assert.equal(note.status, 202);
      await note.body?.cancel();
      await expectError(
        await post(url, [request2026(120, "tools/list")], headers2026("tools/list")),
        400,
        null,
        -32600,
      );
    });
    await t.step("GET and DELETE from a 2026 client: 405", async () => {
      for (const method of ["GET", "DELETE"]) {
        const response = await fetch(url, {
          method,
          headers: { "mcp-protocol-version": "2026-07-28", accept: "text/event-stream" },
        });
        assert.equal(response.status, 405);
        assert.equal(response.headers.get("allow"), "POST");
        await response.body?.cancel();
      }
    });
  });
});

Deno.test("http 2026: progress upgrades the response to SSE and the result ends it", async () => {
  await withServer(async ({ url }) => {
    const response = await post(
      url,
      request2026(1, "tools/call", { name: "count", arguments: {} }, { progressToken: 9 }),
      headers2026("tools/call", "count"),
    );
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("content-type"), "text/event-stream");
    const messages = await new SseReader(response).rest();
    assert.equal(messages.length, 4);
    assert.deepEqual(messages[0], {
      jsonrpc: "2.0",
      method: "notifications/progress",
      params: { progressToken: 9, progress: 1, total: 3 },
    });
    const result = messages[3].result as Record<string, unknown>;
    assert.equal(messages[3].id, 1);
    assert.equal(result.resultType, "complete");
  });
});

Deno.test("http 2026: a client disconnect cancels the request", async (t) => {
  await withServer(async ({ url }) => {
    await t.step("on an SSE response", async () => {
      const before = observed.cancelled;
      const response = await post(
        url,
        request2026(1, "tools/call", { name: "wait_for_cancel", arguments: {} }, {
          progressToken: 1,
        }),
        headers2026("tools/call", "wait_for_cancel"),
      );
      const reader = new SseReader(response);
      assert.equal((await reader.message()).method, "notifications/progress");
      await reader.cancel();
      await until(() => observed.cancelled === before + 1);
    });
    await t.step("before any response", async () => {
      const before = observed.cancelled;
      const started = observed.started;
      const abort = new AbortController();
      const pending = fetch(url, {
        method: "POST",
        signal: abort.signal,
        headers: {
          "content-type": "application/json",
          ...headers2026("tools/call", "wait_for_cancel"),
        },
        body: JSON.stringify(
          request2026(2, "tools/call", { name: "wait_for_cancel", arguments: {} }),
        ),
      });
      await until(() => observed.started === started + 1);
      abort.abort();
      await assert.rejects(pending);
      await until(() => observed.cancelled === before + 1);
    });
  });
});

Deno.test("http 2026: subscriptions/listen streams only what was asked, tagged, then closes with its result", async () => {
  await withServer(async ({ url, handler }) => {
    const response = await post(
      url,
      request2026("L1", "subscriptions/listen", {
        notifications: { promptsListChanged: true, resourcesListChanged: true },
      }),
      headers2026("subscriptions/listen"),
    );
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("content-type"), "text/event-stream");
    const reader = new SseReader(response);
    const ack = await reader.message();
    assert.deepEqual(ack, {
      jsonrpc: "2.0",
      method: "notifications/subscriptions/acknowledged",
      params: {
        _meta: { "io.modelcontextprotocol/subscriptionId": "L1" },
        notifications: { promptsListChanged: true, resourcesListChanged: true },
      },
    });
    handler.engine.server.notify.toolsListChanged();
    handler.engine.server.notify.promptsListChanged();
    assert.deepEqual(await reader.message(), {
      jsonrpc: "2.0",
      method: "notifications/prompts/list_changed",
      params: { _meta: { "io.modelcontextprotocol/subscriptionId": "L1" } },
    });
    let comment;
    while (!comment) comment = (await reader.next(true))?.comment;
    assert.equal(comment, "keepalive");
    handler.close();
    const rest = await reader.rest();
    assert.equal(rest.length, 1);
    assert.equal(rest[0].id, "L1");
    const result = rest[0].result as Record<string, unknown>;
    assert.equal(result.resultType, "complete");
    assert.equal(
      (result._meta as Record<string, unknown>)["io.modelcontextprotocol/subscriptionId"],
      "L1",
    );
  }, { keepAliveMs: 5 });
});

Deno.test("http 2026: subscriptions/listen with invalid params is a JSON -32602 with the id, no stream", async () => {
  await withServer(async ({ url, handler }) => {
    const probes: [string, Record<string, unknown>][] = [
      ["none", {}],
      ["number", { notifications: 5 }],
      ["string", { notifications: { resourceSubscriptions: "test://static-text" } }],
    ];
    for (const [id, params] of probes) {
      const response = await post(
        url,
        request2026(id, "subscriptions/listen", params),
        headers2026("subscriptions/listen"),
      );
      const type = response.headers.get("content-type");
      if (type !== "application/json") {
        await response.body?.cancel();
        assert.fail(`${id}: answered ${response.status} ${type} instead of a JSON error`);
      }
      // In-band (200), as params errors of every method but the `_meta` envelope's are.
      await expectError(response, 200, id, -32602);
    }
    assert.equal(handler.engine.listenerCount, 0);
  });
});

Deno.test("http 2026: the stream limit refuses a listen beyond it with 503", async () => {
  await withServer(async ({ url }) => {
    const listen = (id: string) =>
      post(
        url,
        request2026(id, "subscriptions/listen", { notifications: {} }),
        headers2026("subscriptions/listen"),
      );
    const first = await listen("a");
    const reader = new SseReader(first);
    await reader.message();
    const second = await listen("b");
    assert.equal(second.status, 503);
    assert.equal((await second.json()).id, "b");
    await reader.cancel();
  }, { maxStreams: 1 });
});

Deno.test("http 2026: shutting down cancels in-flight requests and answers them with 503", async () => {
  const server = start();
  const started = observed.started;
  const cancelled = observed.cancelled;
  const pending = post(
    server.url,
    request2026(7, "tools/call", { name: "wait_for_cancel", arguments: {} }),
    headers2026("tools/call", "wait_for_cancel"),
  );
  await until(() => observed.started === started + 1);
  const closed = server.close();
  const response = await pending;
  assert.equal(response.status, 503);
  assert.equal((await response.json()).id, 7);
  await closed;
  assert.equal(observed.cancelled, cancelled + 1);
});
