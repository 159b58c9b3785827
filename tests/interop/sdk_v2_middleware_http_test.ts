/**
 * Middleware over Streamable HTTP between `cli serve
 * tests/helpers/middleware_server.ts --http` (a real child process on a free
 * port) and the official v2 client 2.4.0, in both eras: a rewritten call
 * passes the tool's schema check with the rewritten arguments, a refused one
 * never reaches the tool, results come back wrapped, and the log middleware
 * saw every call.
 */

import assert from "node:assert/strict";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { startCli } from "../helpers/everything_http_server.ts";

for (const era of ["2026-07-28", "legacy"] as const) {
  Deno.test(`middleware over HTTP (${era}): log, reject, rewrite, wrap (SDK v2)`, async () => {
    const server = await startCli("tests/helpers/middleware_server.ts", ["--port", "0"]);
    const client = new Client({ name: "mw-host", version: "1.0.0" }, {
      versionNegotiation: { mode: era === "legacy" ? "legacy" : { pin: era } },
    });
    try {
      await client.connect(new StreamableHTTPClientTransport(server.url));
      const text = async (args: Record<string, unknown>) => {
        const result = await client.callTool({ name: "echo", arguments: args });
        assert.equal(result._meta?.wrapped, true, JSON.stringify(result));
        return (result.content as { text: string }[])[0].text;
      };
      assert.equal(await text({ text: 42 }), "echo 42");
      assert.equal(await text({}), "echo default");
      assert.equal(await text({ text: "hi" }), "echo hi");
      await assert.rejects(
        client.callTool({ name: "echo", arguments: { text: "forbidden" } }),
        (error: { code?: number; message: string }) =>
          error.code === -32602 && error.message.includes("forbidden text"),
      );
      const seen = await client.callTool({ name: "calls_seen", arguments: {} });
      assert.equal((seen.content as { text: string }[])[0].text, "5");
    } finally {
      await client.close();
      await server.stop();
    }
  });
}
