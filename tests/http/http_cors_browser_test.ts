/**
 * CORS in a real browser: headless Chromium (Debian's `chromium`, which
 * `.ci/run` installs) loads a page from one loopback origin whose script
 * calls the MCP server on another origin with `fetch` — through a preflight,
 * as its MCP headers are not CORS-safelisted — in the 2025-11-25 session
 * era and the 2026-07-28 stateless era, and calls the everything example's
 * `test_x_mcp_header`, whose argument 2026-07-28 clients mirror into an
 * `Mcp-Param-Region` header (which the preflight must allow). A page on an
 * origin that is not on the allow-list fails. The page reports back to its own server; Chromium is
 * killed afterwards, so nothing is left behind.
 */

import assert from "node:assert/strict";
import { createHttpHandler } from "@anubis/transport-http";
import everything from "../../examples/everything.ts";
import { META_2026, testServer } from "../helpers/http_helpers.ts";

const CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((path) => {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
});

/**
 * The page's script: both eras against `mcp`, a header-mirrored argument
 * against `everything`, results posted to `/result`.
 */
function pageScript(mcp: string, everything: string): string {
  return `
const meta = ${JSON.stringify(META_2026)};
const accept = "application/json, text/event-stream";
async function rpc(headers, body, url = ${JSON.stringify(mcp)}) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept, ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  const data = text.startsWith("{") ? text
    : text.split("\\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5)).join("");
  return { response, json: data ? JSON.parse(data) : undefined };
}
async function run() {
  const out = {};
  try {
    const init = await rpc({}, { jsonrpc: "2.0", id: 1, method: "initialize", params: {
      protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "page", version: "0" } } });
    const session = init.response.headers.get("mcp-session-id");
    out.session = session !== null;
    const legacyHeaders = { "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" };
    await rpc(legacyHeaders, { jsonrpc: "2.0", method: "notifications/initialized" });
    const legacy = await rpc(legacyHeaders, { jsonrpc: "2.0", id: 2, method: "tools/call",
      params: { name: "echo", arguments: { text: "legacy" } } });
    out.legacy = legacy.json.result.content[0].text;
    const stateless = await rpc(
      { "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "echo" },
      { jsonrpc: "2.0", id: 3, method: "tools/call",
        params: { name: "echo", arguments: { text: "stateless" }, _meta: meta } });
    out.stateless = stateless.json.result.content[0].text;
    const mirrored = await rpc(
      { "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call",
        "mcp-name": "test_x_mcp_header", "mcp-param-region": "eu-west-1" },
      { jsonrpc: "2.0", id: 4, method: "tools/call",
        params: { name: "test_x_mcp_header", arguments: { region: "eu-west-1" }, _meta: meta } },
      ${JSON.stringify(everything)});
    out.mirrored = mirrored.json.result?.content[0].text ?? JSON.stringify(mirrored.json);
  } catch (error) {
    out.error = String(error);
  }
  await fetch("/result", { method: "POST", body: JSON.stringify(out) });
}
run();
`;
}

/** Serves the page on its own loopback origin and resolves with what it reported. */
function pageServer(mcpUrl: () => string, everythingUrl: () => string) {
  let report!: (value: Record<string, unknown>) => void;
  const result = new Promise<Record<string, unknown>>((resolve) => (report = resolve));
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
    const path = new URL(request.url).pathname;
    if (path === "/result") {
      report(await request.json());
      return new Response("ok");
    }
    if (path === "/page.js") {
      return new Response(pageScript(mcpUrl(), everythingUrl()), {
        headers: { "content-type": "text/javascript" },
      });
    }
    return new Response('<!doctype html><script src="/page.js"></script>', {
      headers: { "content-type": "text/html" },
    });
  });
  return { origin: `http://127.0.0.1:${server.addr.port}`, result, server };
}

/** Opens `url` in headless Chromium until the page reports (bounded), then kills it. */
async function browse(
  url: string,
  result: Promise<Record<string, unknown>>,
): Promise<Record<string, unknown>> {
  const profile = await Deno.makeTempDir({ prefix: "anubis-chromium-" });
  const child = new Deno.Command(CHROMIUM!, {
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--no-first-run",
      "--disable-extensions",
      `--user-data-dir=${profile}`,
      url,
    ],
    stdout: "null",
    stderr: "null",
  }).spawn();
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      result,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error("the page never reported")), 60_000);
      }),
    ]);
  } finally {
    clearTimeout(timer);
    // SIGTERM lets Chromium end its own helper processes; SIGKILL if it lingers.
    child.kill("SIGTERM");
    const killer = setTimeout(() => child.kill("SIGKILL"), 5_000);
    await child.status;
    clearTimeout(killer);
    await Deno.remove(profile, { recursive: true }).catch(() => {});
  }
}

Deno.test({
  name:
    "cors browser: a page on an allowed origin calls both eras and a header-mirrored argument through a preflight; another origin fails",
  ignore: CHROMIUM === undefined,
  async fn() {
    let mcp = "";
    let everythingUrl = "";
    const allowed = pageServer(() => mcp, () => everythingUrl);
    const other = pageServer(() => mcp, () => everythingUrl);
    const handler = createHttpHandler(testServer(), {
      keepAliveMs: 0,
      cors: { origins: [allowed.origin] },
    });
    const everythingHandler = createHttpHandler(everything, {
      keepAliveMs: 0,
      path: "/everything",
      cors: { origins: [allowed.origin] },
    });
    const preflights: string[] = [];
    const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => {
      if (request.method === "OPTIONS") preflights.push(request.headers.get("origin") ?? "");
      return new URL(request.url).pathname === "/everything"
        ? everythingHandler(request)
        : handler(request);
    });
    mcp = `http://127.0.0.1:${server.addr.port}/mcp`;
    everythingUrl = `http://127.0.0.1:${server.addr.port}/everything`;
    try {
      const ok = await browse(allowed.origin + "/", allowed.result);
      assert.deepEqual(ok, {
        session: true,
        legacy: "echo: legacy",
        stateless: "echo: stateless",
        mirrored: "Region: eu-west-1",
      });
      assert.ok(preflights.includes(allowed.origin), "the browser sent a preflight");
      const refused = await browse(other.origin + "/", other.result);
      assert.match(String(refused.error), /TypeError|Failed to fetch/);
      assert.equal(refused.legacy, undefined);
      assert.ok(preflights.includes(other.origin), "the other page's preflight was refused");
    } finally {
      handler.close();
      everythingHandler.close();
      await server.shutdown();
      await allowed.server.shutdown();
      await other.server.shutdown();
    }
  },
});

if (CHROMIUM === undefined) {
  console.warn(
    "http_cors_browser_test: skipped, no chromium at /usr/bin/chromium (apt-get install chromium)",
  );
}
