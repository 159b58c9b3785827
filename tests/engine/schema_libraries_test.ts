/**
 * Tools written with zod, valibot, arktype and JSON Schema, served over real
 * stdio and real HTTP: each lists its JSON Schema (from the library's own
 * converter), applies its defaults, and answers invalid arguments as the
 * version says (-32602 before 2025-11-25, an `isError` result from then on).
 * A schema the server cannot list fails when the server is defined.
 */

import assert from "node:assert/strict";
import { defineServer } from "@anubis/core";
import { connect } from "@anubis/testing";
import { handshake, start as startStdio } from "../helpers/stdio_child.ts";
import { headers2026, initialize, post, request2026, start } from "../helpers/http_helpers.ts";
import server from "../helpers/schema_libraries_server.ts";

const TOOLS = ["zod", "valibot", "arktype", "json"];
const DEFAULT_DAYS: Record<string, number> = { zod: 2, valibot: 3, arktype: 4, json: 5 };

function checkListed(tools: { name: string; inputSchema: Record<string, unknown> }[]) {
  // json_default and measure: checked by tests/interop/sdk_v1_schema_libraries_test.ts.
  assert.deepEqual(tools.map((t) => t.name), [...TOOLS, "json_default", "measure"]);
  for (const tool of tools.filter((t) => TOOLS.includes(t.name))) {
    assert.equal(tool.inputSchema.type, "object", tool.name);
    const properties = tool.inputSchema.properties as Record<string, { type?: string }>;
    assert.equal(properties.city.type, "string", tool.name);
    assert.deepEqual(tool.inputSchema.required?.toString().includes("city"), true, tool.name);
  }
}

Deno.test("defineServer names the tool whose Standard Schema cannot be listed", () => {
  const opaque = {
    "~standard": {
      version: 1 as const,
      vendor: "opaque",
      validate: (value: unknown) => ({ value }),
    },
  };
  assert.throws(
    () =>
      defineServer({
        name: "s",
        version: "1",
        tools: [{ name: "opaque", inputSchema: opaque, handler: () => "" }],
      }),
    (error: unknown) =>
      error instanceof TypeError && /^Tool opaque cannot be served: /.test(error.message) &&
      /JSON Schema/.test(error.message),
  );
});

Deno.test("a valibot schema its converter cannot list stops the start: ready, connect, cli serve", async () => {
  const { default: unlistable } = await import("../helpers/valibot_unlistable_server.ts");
  const named = (error: unknown) =>
    error instanceof TypeError && /^Tool when cannot be served: /.test(error.message) &&
    /date/.test(error.message);
  await assert.rejects(unlistable.ready, named);
  await assert.rejects(connect(unlistable), named);
  // The cli says so in one line and exits 1 instead of answering tools/list with -32603.
  const cli = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "cli/main.ts", "serve", "tests/helpers/valibot_unlistable_server.ts"],
    cwd: new URL("../..", import.meta.url),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const stderr = new TextDecoder().decode(cli.stderr);
  assert.equal(cli.code, 1, stderr);
  assert.match(stderr, /Tool when cannot be served: .*date/);
  assert.equal(cli.stdout.length, 0, "nothing on stdout: no protocol was served");
});

Deno.test("over HTTP (2026-07-28): listed schemas, defaults, isError for invalid arguments", async () => {
  const http = start({}, server);
  try {
    const listed = await (await post(
      http.url,
      request2026(1, "tools/list"),
      headers2026("tools/list"),
    )).json();
    checkListed(listed.result.tools);
    for (const name of TOOLS) {
      const called = await (await post(
        http.url,
        request2026(2, "tools/call", { name, arguments: { city: "oslo" } }),
        headers2026("tools/call", name),
      )).json();
      assert.equal(called.result.content[0].text, `OSLO for ${DEFAULT_DAYS[name]} days`, name);
      const invalid = await (await post(
        http.url,
        request2026(3, "tools/call", { name, arguments: { city: 7 } }),
        headers2026("tools/call", name),
      )).json();
      assert.equal(invalid.result.isError, true, name);
      assert.match(invalid.result.content[0].text, /Invalid arguments for tool .*city/, name);
    }
  } finally {
    await http.close();
  }
});

Deno.test("over HTTP (2025-06-18): invalid arguments are -32602, the session keeps serving", async () => {
  const http = start({}, server);
  try {
    const session = { "mcp-session-id": await initialize(http.url, "2025-06-18") };
    const version = { ...session, "mcp-protocol-version": "2025-06-18" };
    for (const name of TOOLS) {
      const invalid = await (await post(http.url, {
        jsonrpc: "2.0",
        id: 4,
        method: "tools/call",
        params: { name, arguments: {} },
      }, version)).json();
      assert.equal(invalid.id, 4);
      assert.equal(invalid.error.code, -32602, name);
    }
    const ok = await (await post(http.url, {
      jsonrpc: "2.0",
      id: 5,
      method: "tools/call",
      params: { name: "valibot", arguments: { city: "rome", days: 1 } },
    }, version)).json();
    assert.equal(ok.result.content[0].text, "ROME for 1 days");
  } finally {
    await http.close();
  }
});

Deno.test("over stdio: listed schemas and -32602 for invalid arguments (2025-06-18)", async () => {
  const child = startStdio("tests/helpers/schema_libraries_server.ts");
  try {
    await handshake(child, "2025-06-18");
    await child.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }) + "\n");
    const listed = await child.next((m) => m.id === 1) as { result: { tools: [] } };
    checkListed(listed.result.tools);
    let id = 10;
    for (const name of TOOLS) {
      await child.send(
        JSON.stringify({
          jsonrpc: "2.0",
          id: ++id,
          method: "tools/call",
          params: { name, arguments: { city: ["x"] } },
        }) + "\n",
      );
      const invalid = await child.next((m) => m.id === id) as { error: { code: number } };
      assert.equal(invalid.error.code, -32602, name);
    }
  } finally {
    await child.close();
  }
});
