/**
 * Interop over stdio between `cli serve examples/everything.ts` (a real child
 * process) and the official TypeScript SDK v2 client: pinned to 2026-07-28
 * (the steps are in `everything_sdk_v2.ts`), and in `auto` negotiation mode,
 * where its `server/discover` probe must select the modern era.
 */

import assert from "node:assert/strict";
import { serveParams } from "../helpers/stdio_child.ts";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { connectV2, runV2Steps, VERSION } from "../helpers/everything_sdk_v2.ts";

const everything = () => new StdioClientTransport(serveParams("examples/everything.ts"));

Deno.test(`everything over stdio, SDK v2 client at ${VERSION}`, async (t) => {
  const connected = await connectV2(everything());
  try {
    await runV2Steps(t, connected);
  } finally {
    await connected.client.close();
  }
});

Deno.test("SDK v2 client in auto mode negotiates 2026-07-28 over stdio", async () => {
  const client = new Client({ name: "sdk-v2-auto", version: "2.0.0" }, {
    versionNegotiation: { mode: "auto" },
  });
  await client.connect(everything());
  try {
    assert.equal(client.getProtocolEra(), "modern");
    assert.equal(client.getNegotiatedProtocolVersion(), VERSION);
    const result = await client.callTool({ name: "test_simple_text", arguments: {} });
    assert.deepEqual(result.content, [{
      type: "text",
      text: "This is a simple text response for testing.",
    }]);
  } finally {
    await client.close();
  }
});

Deno.test("SDK v2 client in legacy mode gets a 2025-11-25 session over stdio", async () => {
  const client = new Client({ name: "sdk-v2-legacy", version: "2.0.0" }, {
    capabilities: { elicitation: {} },
  });
  client.setRequestHandler("elicitation/create", () => ({
    action: "accept",
    content: { name: "Alice" },
  }));
  await client.connect(everything());
  try {
    assert.equal(client.getProtocolEra(), "legacy");
    assert.equal(client.getNegotiatedProtocolVersion(), "2025-11-25");
    const result = await client.callTool({
      name: "test_input_required_result_elicitation",
      arguments: {},
    });
    // The same handler that answers input_required in 2026 sent a real request here.
    assert.deepEqual(result.content, [{ type: "text", text: "Hello, Alice!" }]);
  } finally {
    await client.close();
  }
});
