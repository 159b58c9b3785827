/**
 * `supportedProtocolVersions`: checked against the registry when the engine is
 * made, and followed by `initialize`, `server/discover` and `-32022`.
 */

import assert from "node:assert/strict";
import { defineServer } from "@anubis/core";
import { Engine } from "@anubis/core/engine";
import { createDefaultRegistry } from "@anubis/dialects";
import { engineHarness, META } from "../helpers/engine_harness.ts";

const TOOL = { name: "echo", description: "echoes", handler: () => "echoed" };

function engineFor(supportedProtocolVersions: readonly string[]): Engine {
  const server = defineServer({ name: "t", version: "1.0.0", supportedProtocolVersions });
  return new Engine(server, { registry: createDefaultRegistry() });
}

Deno.test("unknown versions are refused when the engine is made, naming them and the known ones", () => {
  assert.throws(() => engineFor(["bogus", "2025-06-18", "1999-01-01"]), {
    name: "TypeError",
    message: 'supportedProtocolVersions names versions the registry does not know: "bogus", ' +
      '"1999-01-01" (known: 2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26)',
  });
  assert.throws(() => engineFor([]), {
    name: "TypeError",
    message: "supportedProtocolVersions is empty: name at least one of 2026-07-28, 2025-11-25, " +
      "2025-06-18, 2025-03-26",
  });
  assert.deepEqual(engineFor(["2025-03-26", "2026-07-28"]).supportedVersions(), [
    "2026-07-28",
    "2025-03-26",
  ]);
});

Deno.test("one legacy version: initialize negotiates it, whatever the client asks; no stateless era", async () => {
  const ask = async (protocolVersion: string) => {
    const t = engineHarness({ supportedProtocolVersions: ["2025-06-18"], tools: [TOOL] });
    const reply = await t.initialize(protocolVersion);
    return reply.result.protocolVersion;
  };
  assert.equal(await ask("2025-06-18"), "2025-06-18");
  // Unsupported requested versions are answered with the server's own (2025 lifecycle).
  assert.equal(await ask("2025-11-25"), "2025-06-18");
  assert.equal(await ask("2025-03-26"), "2025-06-18");
  assert.equal(await ask("2026-07-28"), "2025-06-18");

  const t = engineHarness({ supportedProtocolVersions: ["2025-06-18"], tools: [TOOL] });
  for (const method of ["server/discover", "tools/list"]) {
    const reply = await t.send(method, { _meta: META });
    assert.equal(reply!.status, 400);
    assert.deepEqual((reply!.message as { error: unknown }).error, {
      code: -32022,
      message: "Unsupported protocol version",
      data: { supported: ["2025-06-18"], requested: "2026-07-28" },
    });
  }
});

Deno.test("2026-07-28 only: initialize fails naming it, stateless requests work", async () => {
  const t = engineHarness({ supportedProtocolVersions: ["2026-07-28"], tools: [TOOL] });
  const refused = await t.request("initialize", {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "c", version: "1" },
  });
  assert.deepEqual(refused.error, {
    code: -32602,
    message: "Unsupported protocol version",
    data: { supported: ["2026-07-28"], requested: "2025-11-25" },
  });
  assert.equal(t.session.dialect, undefined);
  const discover = (await t.request("server/discover", { _meta: META })).result;
  assert.deepEqual(discover.supportedVersions, ["2026-07-28"]);
  const call = (await t.request("tools/call", { name: "echo", _meta: META })).result;
  assert.deepEqual(call.content, [{ type: "text", text: "echoed" }]);
  const other = await t.request("tools/list", {
    _meta: { ...META, "io.modelcontextprotocol/protocolVersion": "2026-12-01" },
  });
  assert.deepEqual(other.error.data, { supported: ["2026-07-28"], requested: "2026-12-01" });
});

Deno.test("discover and -32022 name exactly the restricted list", async () => {
  const t = engineHarness({ supportedProtocolVersions: ["2025-11-25", "2026-07-28"] });
  const discover = (await t.request("server/discover", { _meta: META })).result;
  assert.deepEqual(discover.supportedVersions, ["2026-07-28", "2025-11-25"]);
  const refused = await t.request("tools/list", {
    _meta: { ...META, "io.modelcontextprotocol/protocolVersion": "2025-11-25" },
  });
  assert.deepEqual(refused.error.data, {
    supported: ["2026-07-28", "2025-11-25"],
    requested: "2025-11-25",
  });
  assert.equal((await t.initialize("2025-06-18")).result.protocolVersion, "2025-11-25");
});

Deno.test("a transport's resolved stateless dialect answers as the engine's own decision does", async () => {
  const engine = engineFor(["2026-07-28", "2025-11-25"]);
  const dialect = engine.dialect("2026-07-28", "stateless");
  assert.ok(dialect);
  const meta = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
  };
  const call = (params: Record<string, unknown>) => ({
    jsonrpc: "2.0" as const,
    id: 7,
    method: "server/discover",
    params,
  });
  const exchange = { transport: "stdio" };
  for (
    const params of [{ _meta: meta }, {
      _meta: { ...meta, "io.modelcontextprotocol/clientCapabilities": 5 },
    }]
  ) {
    const decided = await engine.handle(call(params), exchange);
    const handed = await engine.handle(call(params), exchange, dialect);
    assert.deepEqual(handed, decided);
  }
  const bad = await engine.handle(
    call({ _meta: { ...meta, "io.modelcontextprotocol/clientCapabilities": 5 } }),
    exchange,
    dialect,
  );
  assert.equal(bad && "error" in bad.message ? bad.message.error.code : undefined, -32602);
  engine.close();
});
