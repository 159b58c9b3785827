/**
 * A quick interop smoke test with the official TypeScript SDK v1 client's
 * `StreamableHTTPClientTransport` (`@modelcontextprotocol/sdk@1.32.2`)
 * against the real handler: handshake, session, GET stream, a tool call with
 * progress, an elicitation answered by the client, a list change, and the
 * DELETE on close.
 */

import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  ElicitRequestSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { start, until } from "../helpers/http_helpers.ts";
import { MemoryEventStore } from "@anubis/event-store-memory";

Deno.test("http sdk v1: StreamableHTTPClientTransport end to end", async () => {
  const server = start({ eventStore: new MemoryEventStore() });
  const client = new Client({ name: "sdk-v1", version: "1.0.0" }, {
    capabilities: { elicitation: {} },
  });
  client.setRequestHandler(ElicitRequestSchema, () => ({
    action: "accept",
    content: { name: "Grace" },
  }));
  let changes = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    changes++;
  });
  const transport = new StreamableHTTPClientTransport(new URL(server.url));
  try {
    await client.connect(transport);
    assert.equal(client.getServerVersion()?.name, "http-test");
    assert.match(transport.sessionId ?? "", /^[0-9a-f]{32}$/);
    const tools = await client.listTools();
    assert.ok(tools.tools.some((t: { name: string }) => t.name === "echo"));
    const progress: number[] = [];
    const counted = await client.callTool({ name: "count", arguments: {} }, undefined, {
      onprogress: (p: { progress: number }) => progress.push(p.progress),
    });
    assert.deepEqual(counted.content, [{ type: "text", text: "counted" }]);
    assert.deepEqual(progress, [1, 2, 3]);
    const asked = await client.callTool({ name: "ask", arguments: {} });
    assert.deepEqual(asked.content, [{ type: "text", text: "Hello, Grace!" }]);
    // The GET stream is open once the client has it; a change reaches it.
    await until(() => server.handler.openStreams === 1);
    await client.callTool({ name: "change_tools", arguments: {} });
    await until(() => changes === 1);
    await transport.terminateSession();
    assert.equal(server.handler.sessionCount, 0);
  } finally {
    await client.close();
    await server.close();
  }
});
