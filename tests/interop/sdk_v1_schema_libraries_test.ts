/**
 * The official SDK v1 client over stdio against tools written with zod,
 * valibot, arktype and JSON Schema: it reads their listed JSON Schemas,
 * gets the defaults applied, and `isError` results for invalid arguments
 * (2025-11-25).
 */

import assert from "node:assert/strict";
import { serveParams } from "../helpers/stdio_child.ts";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

Deno.test("sdk v1 over stdio: zod, valibot, arktype and JSON Schema tools", async () => {
  const client = new Client({ name: "sdk-v1", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport(serveParams("tests/helpers/schema_libraries_server.ts")),
  );
  try {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t: { name: string }) => t.name), [
      "zod",
      "valibot",
      "arktype",
      "json",
    ]);
    for (const tool of tools as { name: string; inputSchema: { required?: string[] } }[]) {
      assert.deepEqual(tool.inputSchema.required, ["city"], tool.name);
    }
    const defaults: Record<string, number> = { zod: 2, valibot: 3, arktype: 4, json: 5 };
    for (const name of Object.keys(defaults)) {
      const called = await client.callTool({ name, arguments: { city: "lima" } });
      assert.deepEqual(called.content, [{ type: "text", text: `LIMA for ${defaults[name]} days` }]);
      const invalid = await client.callTool({ name, arguments: { city: false } });
      assert.equal(invalid.isError, true, name);
      const text = (invalid.content as { text: string }[])[0].text;
      assert.match(text, new RegExp(`^Invalid arguments for tool ${name}: `));
    }
  } finally {
    await client.close();
  }
});
