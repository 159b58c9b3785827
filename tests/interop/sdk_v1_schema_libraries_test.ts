/**
 * The official SDK v1 client over stdio and over Streamable HTTP (`cli serve
 * --http`) against tools written with zod, valibot, arktype and JSON Schema:
 * it reads their listed JSON Schemas, gets the defaults applied, and `isError`
 * results for invalid arguments. A JSON Schema `default` is listed as written
 * and filled in by the server when the argument is left out; an output that violates `outputSchema` is
 * answered -32603 (the spec: a server must return conforming structured
 * content), and the server keeps serving (2025-11-25).
 */

import assert from "node:assert/strict";
import { serveParams } from "../helpers/stdio_child.ts";
import { startCli } from "../helpers/everything_http_server.ts";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const SERVER = "tests/helpers/schema_libraries_server.ts";
const DEFAULT_DAYS: Record<string, number> = { zod: 2, valibot: 3, arktype: 4, json: 5 };

interface ListedTool {
  name: string;
  inputSchema: { required?: string[]; properties?: Record<string, unknown> };
  outputSchema?: unknown;
}

/** What both transports must show: schemas, defaults, invalid arguments, output checks. */
async function checkSchemaLibraries(client: Client) {
  const tools = (await client.listTools()).tools as ListedTool[];
  assert.deepEqual(tools.map((t) => t.name), [
    ...Object.keys(DEFAULT_DAYS),
    "json_default",
    "measure",
  ]);
  for (const tool of tools.filter((t) => t.name !== "measure")) {
    assert.deepEqual(tool.inputSchema.required, ["city"], tool.name);
  }
  for (const name of Object.keys(DEFAULT_DAYS)) {
    const called = await client.callTool({ name, arguments: { city: "lima" } });
    assert.deepEqual(called.content, [{
      type: "text",
      text: `LIMA for ${DEFAULT_DAYS[name]} days`,
    }]);
    const invalid = await client.callTool({ name, arguments: { city: false } });
    assert.equal(invalid.isError, true, name);
    const text = (invalid.content as { text: string }[])[0].text;
    assert.match(text, new RegExp(`^Invalid arguments for tool ${name}: `));
  }

  // JSON Schema's `default`: listed for the client, and filled in by the server when left out.
  const withDefault = tools.find((t) => t.name === "json_default")!;
  assert.deepEqual(withDefault.inputSchema.properties?.days, { type: "integer", default: 6 });
  const unsaid = await client.callTool({ name: "json_default", arguments: { city: "lima" } });
  assert.deepEqual(unsaid.content, [{ type: "text", text: "LIMA for 6 days" }]);
  const said = await client.callTool({
    name: "json_default",
    arguments: { city: "lima", days: 1 },
  });
  assert.deepEqual(said.content, [{ type: "text", text: "LIMA for 1 days" }]);
  const wrong = await client.callTool({
    name: "json_default",
    arguments: { city: "lima", days: 1.5 },
  });
  assert.equal(wrong.isError, true);
  assert.match(
    (wrong.content as { text: string }[])[0].text,
    /json_default: days: must be integer/,
  );

  // A declared outputSchema: conforming structured content passes the client's own check.
  const measure = tools.find((t) => t.name === "measure")!;
  assert.deepEqual(measure.outputSchema, {
    type: "object",
    properties: { celsius: { type: "number" } },
    required: ["celsius"],
  });
  const measured = await client.callTool({ name: "measure", arguments: {} });
  assert.deepEqual(measured.structuredContent, { celsius: 21 });
  // Output that violates it is the server's fault: -32603 naming the tool, never the bad data.
  await assert.rejects(
    client.callTool({ name: "measure", arguments: { broken: true } }),
    (error: { code?: number; message?: string }) =>
      error.code === -32603 && /measure/.test(error.message ?? "") &&
      !/warm/.test(error.message ?? ""),
  );
  // ...and the server keeps serving.
  const again = await client.callTool({ name: "zod", arguments: { city: "quito", days: 1 } });
  assert.deepEqual(again.content, [{ type: "text", text: "QUITO for 1 days" }]);
}

Deno.test("sdk v1 over stdio: zod, valibot, arktype and JSON Schema tools", async () => {
  const client = new Client({ name: "sdk-v1", version: "1.0.0" });
  await client.connect(new StdioClientTransport(serveParams(SERVER)));
  try {
    await checkSchemaLibraries(client);
  } finally {
    await client.close();
  }
});

Deno.test("sdk v1 over Streamable HTTP (cli serve --http): the same tools", async () => {
  const server = await startCli(SERVER, ["--port", "0"]);
  // Bounded: a hung server is killed, which fails the pending request.
  const timer = setTimeout(() => server.stop("SIGKILL"), 120_000);
  const client = new Client({ name: "sdk-v1", version: "1.0.0" });
  try {
    await client.connect(new StreamableHTTPClientTransport(server.url));
    await checkSchemaLibraries(client);
  } finally {
    await client.close();
    clearTimeout(timer);
    const { code, stderr } = await server.stop();
    assert.equal(code, 0, stderr);
  }
});
