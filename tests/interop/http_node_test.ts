/**
 * The handler under Node: `deno bundle` it for Node, mount it in a minimal
 * `node:http` adapter, and drive both eras with fetch from inside Node.
 * Skipped when `node` is not installed.
 */

import assert from "node:assert/strict";

const ROOT = new URL("../..", import.meta.url);

function hasNode(): boolean {
  try {
    return new Deno.Command("node", { args: ["--version"], stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
}

const ENTRY = `
import hello from "${new URL("examples/hello.ts", ROOT).href}";
import { createHttpHandler } from "${new URL("transport-http/mod.ts", ROOT).href}";
import { MemoryEventStore } from "${new URL("event-store-memory/mod.ts", ROOT).href}";
export const handler = createHttpHandler(hello, { eventStore: new MemoryEventStore() });
`;

const RUN = `
import { handler } from "./bundle.mjs";
import http from "node:http";
const server = http.createServer(async (req, res) => {
  const controller = new AbortController();
  res.on("close", () => { if (!res.writableFinished) controller.abort(); });
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const hasBody = req.method === "POST" && chunks.length > 0;
  const request = new Request("http://" + req.headers.host + req.url, {
    method: req.method, headers: req.headers, body: hasBody ? Buffer.concat(chunks) : undefined,
    signal: controller.signal,
  });
  const response = await handler(request);
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (response.body) for await (const chunk of response.body) res.write(chunk);
  res.end();
});
server.listen(0, "127.0.0.1", async () => {
  const url = "http://127.0.0.1:" + server.address().port + "/mcp";
  const h = { "content-type": "application/json", accept: "application/json, text/event-stream" };
  const post = (body, headers = {}) =>
    fetch(url, { method: "POST", headers: { ...h, ...headers }, body: JSON.stringify(body) });
  const out = {};
  const init = await post({ jsonrpc: "2.0", id: 1, method: "initialize", params: {
    protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "node", version: "1" } } });
  const sid = init.headers.get("mcp-session-id");
  out.init = [init.status, (await init.json()).result.protocolVersion];
  const count = await post({ jsonrpc: "2.0", id: 2, method: "tools/call",
    params: { name: "count", arguments: {}, _meta: { progressToken: 1 } } }, { "mcp-session-id": sid });
  out.count = [count.headers.get("content-type"), (await count.text()).split("event: message").length - 1];
  const meta = { "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {} };
  const modern = await post({ jsonrpc: "2.0", id: 3, method: "tools/call",
    params: { name: "echo", arguments: { text: "node" }, _meta: meta } },
    { "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "echo" });
  out.modern = [modern.status, (await modern.json()).result.content[0].text];
  const ladder = await post({ jsonrpc: "2.0", id: 4, method: "tools/list", params: { _meta: meta } },
    { "mcp-protocol-version": "2026-07-28", "mcp-method": "TOOLS/LIST" });
  out.ladder = [ladder.status, (await ladder.json()).error.code];
  const del = await fetch(url, { method: "DELETE", headers: { "mcp-session-id": sid } });
  out.delete = del.status;
  handler.close();
  server.close();
  console.log(JSON.stringify(out));
});
`;

Deno.test({
  name: "http node: the bundled handler serves both eras behind node:http",
  ignore: !hasNode(),
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "anubis-http-node-" });
    const entry = `${dir}/entry.ts`;
    try {
      await Deno.writeTextFile(entry, ENTRY);
      const bundled = await new Deno.Command(Deno.execPath(), {
        args: ["bundle", "--platform", "node", "-o", `${dir}/bundle.mjs`, entry],
        cwd: ROOT,
        stdout: "null",
        stderr: "piped",
      }).output();
      assert.ok(bundled.success, new TextDecoder().decode(bundled.stderr));
      const bundle = await Deno.readTextFile(`${dir}/bundle.mjs`);
      assert.ok(!bundle.includes("Deno."), "the handler needs no Deno global");
      await Deno.writeTextFile(`${dir}/run.mjs`, RUN);
      const run = await new Deno.Command("node", {
        args: ["run.mjs"],
        cwd: dir,
        stdout: "piped",
        stderr: "piped",
      }).output();
      const stdout = new TextDecoder().decode(run.stdout).trim();
      assert.ok(run.success, new TextDecoder().decode(run.stderr));
      assert.deepEqual(JSON.parse(stdout), {
        init: [200, "2025-11-25"],
        count: ["text/event-stream", 4],
        modern: [200, "echo: node"],
        ladder: [400, -32020],
        delete: 200,
      });
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
