import assert from "node:assert/strict";
import { defineServer } from "@anubis/core";
import { type Dialect, Engine, MetaKey, Registry } from "@anubis/core/engine";
import * as s from "@anubis/core/schema";
import {
  ALL_DIALECTS,
  createDefaultRegistry,
  spec2025_03_26,
  spec2025_06_18,
  spec2025_11_25,
  spec2026_07_28,
  v2025_03_26,
  v2025_06_18,
  v2025_11_25,
  v2026_07_28,
} from "./mod.ts";

const serverInfo = {
  name: "s",
  version: "1.0.0",
  title: "S",
  description: "d",
  websiteUrl: "https://x",
  icons: [],
};
const context = { serverInfo: { name: "s", version: "1.0.0" }, retry: false };
const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
};

Deno.test("compliance loop: every dialect is consistent", () => {
  for (const dialect of ALL_DIALECTS) {
    assert.equal(dialect.era, dialect.version < "2026" ? "legacy" : "stateless", dialect.version);
    for (const method of dialect.requestMethods) {
      assert.ok(dialect.requestParamsSchema(method), `${dialect.version} ${method} params`);
    }
    for (const method of dialect.notificationMethods) {
      assert.ok(
        dialect.notificationParamsSchema(method),
        `${dialect.version} ${method} notification`,
      );
    }
    for (const feature of dialect.supportedFeatures) assert.ok(dialect.supportsFeature(feature));
    assert.equal(dialect.supportsFeature("batching"), dialect.version === "2025-03-26");
    assert.equal(dialect.transportRules.batching, dialect.version === "2025-03-26");
    if (dialect.era === "stateless") {
      for (const method of dialect.requestMethods) {
        assert.equal(
          s.validate(dialect.requestParamsSchema(method)!, {}).ok,
          false,
          `${method} needs _meta`,
        );
      }
    }
  }
});

Deno.test("method lists differ by version", () => {
  for (const method of ["initialize", "ping", "logging/setLevel", "resources/subscribe"]) {
    assert.ok(v2025_11_25.requestMethods.includes(method));
    assert.ok(!v2026_07_28.requestMethods.includes(method), method);
  }
  for (const method of ["server/discover", "subscriptions/listen"]) {
    assert.ok(v2026_07_28.requestMethods.includes(method));
    assert.ok(!v2025_11_25.requestMethods.includes(method), method);
  }
  assert.ok(!v2025_03_26.serverRequestMethods.includes("elicitation/create"));
  assert.ok(v2025_06_18.serverRequestMethods.includes("elicitation/create"));
  assert.deepEqual(v2026_07_28.serverRequestMethods, []);
  assert.ok(v2025_11_25.requestMethods.includes("tasks/get"));
});

Deno.test("params schemas accept spec examples and reject wrong shapes", () => {
  const call = v2025_11_25.requestParamsSchema("tools/call")!;
  assert.ok(s.validate(call, { name: "x", arguments: { a: 1 } }).ok);
  assert.ok(!s.validate(call, { name: 1 }).ok);
  assert.ok(!s.validate(call, { name: "x", arguments: [] }).ok);
  const level = v2025_06_18.requestParamsSchema("logging/setLevel")!;
  assert.ok(!s.validate(level, { level: "loud" }).ok);
  const complete = v2025_11_25.requestParamsSchema("completion/complete")!;
  assert.ok(
    s.validate(complete, {
      ref: { type: "ref/prompt", name: "p" },
      argument: { name: "a", value: "" },
    }).ok,
  );
  assert.ok(
    !s.validate(complete, {
      ref: { type: "ref/tool", name: "p" },
      argument: { name: "a", value: "" },
    }).ok,
  );
  const stateless = v2026_07_28.requestParamsSchema("tools/call")!;
  assert.ok(
    s.validate(stateless, { name: "x", _meta: META, inputResponses: {}, requestState: "s" }).ok,
  );
  assert.ok(!s.validate(stateless, { name: "x", _meta: META, inputResponses: null }).ok);
  const listen = v2026_07_28.requestParamsSchema("subscriptions/listen")!;
  assert.ok(s.validate(listen, { _meta: META, notifications: { toolsListChanged: true } }).ok);
  assert.ok(!s.validate(listen, { _meta: META }).ok);
});

Deno.test("the stateless _meta schema", () => {
  const meta = v2026_07_28.requestMetaSchema!;
  assert.ok(s.validate(meta, { ...META, "x.example/extra": 1 }).ok);
  assert.ok(!s.validate(meta, { "io.modelcontextprotocol/protocolVersion": "2026-07-28" }).ok);
  assert.ok(!s.validate(meta, { "io.modelcontextprotocol/clientCapabilities": {} }).ok);
  assert.ok(!s.validate(meta, { ...META, "io.modelcontextprotocol/logLevel": "loud" }).ok);
  assert.equal(v2025_11_25.requestMetaSchema, undefined);
});

Deno.test("the stateless _meta check answers as the object schema of its shape does", () => {
  const meta = v2026_07_28.requestMetaSchema as s.ObjectSchema<s.Shape>;
  const generic = s.object(meta.shape);
  const info = "io.modelcontextprotocol/clientInfo";
  const level = "io.modelcontextprotocol/logLevel";
  const caps = "io.modelcontextprotocol/clientCapabilities";
  const version = "io.modelcontextprotocol/protocolVersion";
  const values: unknown[] = [
    META,
    { ...META, [info]: { name: "c", version: "1" }, [level]: "debug", progressToken: "t" },
    { ...META, progressToken: 7, "x.example/extra": [1] },
    undefined,
    null,
    [],
    "meta",
    {},
    { ...META, [version]: 20260728 },
    { ...META, [caps]: null },
    { ...META, [caps]: [] },
    { ...META, [caps]: "all" },
    { ...META, [info]: null },
    { ...META, [info]: { name: "c" } },
    { ...META, [info]: { name: 1, version: 2 } },
    { ...META, [info]: [] },
    { ...META, [level]: "loud" },
    { ...META, [level]: null },
    { ...META, progressToken: 1.5 },
    { ...META, progressToken: Infinity },
    { ...META, progressToken: null },
    { ...META, progressToken: {} },
    { [caps]: {}, [level]: 3, progressToken: false },
  ];
  for (const value of values) {
    assert.deepEqual(s.validate(meta, value), s.validate(generic, value), JSON.stringify(value));
  }
});

Deno.test("capabilities are shaped per version", () => {
  const declared = {
    tools: { listChanged: true },
    completions: {},
    logging: {},
    tasks: { list: {} },
    extensions: { "x/y": {} },
    completion: {},
  } as never;
  assert.deepEqual(v2025_03_26.serverCapabilities(declared), {
    tools: { listChanged: true },
    completions: {},
    logging: {},
  });
  assert.deepEqual(v2025_11_25.serverCapabilities(declared), {
    tools: { listChanged: true },
    completions: {},
    logging: {},
    tasks: { list: {} },
  });
  assert.deepEqual(v2026_07_28.serverCapabilities(declared), {
    tools: { listChanged: true },
    completions: {},
    logging: {},
    extensions: { "x/y": {} },
  });
});

Deno.test("legacy encoding never carries 2026 fields and drops what a version lacks", () => {
  for (const dialect of [v2025_03_26, v2025_06_18, v2025_11_25]) {
    assert.deepEqual(dialect.encodeResult("ping", { resultType: "complete" }, context), {});
    assert.deepEqual(
      dialect.encodeResult(
        "tools/call",
        { content: [], resultType: "complete", ttlMs: 1 },
        context,
      ),
      {
        content: [],
      },
    );
  }
  const tool = {
    name: "t",
    title: "T",
    inputSchema: { type: "object" },
    outputSchema: { type: "object" },
    icons: [],
    execution: {},
  };
  const input = { tools: [tool] };
  assert.deepEqual(v2025_03_26.encodeResult("tools/list", input, context), {
    tools: [{ name: "t", inputSchema: { type: "object" } }],
  });
  assert.deepEqual(v2025_06_18.encodeResult("tools/list", input, context), {
    tools: [{
      name: "t",
      title: "T",
      inputSchema: { type: "object" },
      outputSchema: { type: "object" },
    }],
  });
  assert.equal(v2025_11_25.encodeResult("tools/list", input, context), input);
  assert.deepEqual(input.tools[0], tool, "the input is not mutated");
  assert.deepEqual(
    v2025_03_26.encodeResult("initialize", {
      protocolVersion: "2025-03-26",
      capabilities: {},
      serverInfo,
    }, context),
    {
      protocolVersion: "2025-03-26",
      capabilities: {},
      serverInfo: { name: "s", version: "1.0.0" },
    },
  );
  assert.deepEqual(
    v2025_03_26.encodeResult("tools/call", {
      content: [{ type: "resource_link", uri: "file:///a", name: "a" }],
      structuredContent: { a: 1 },
    }, context),
    { content: [{ type: "text", text: "a: file:///a" }] },
  );
});

Deno.test("stateless encoding adds resultType, server identity and caching fields", () => {
  assert.deepEqual(
    v2026_07_28.encodeResult("tools/call", { content: [], _meta: { k: 1 } }, context),
    {
      content: [],
      resultType: "complete",
      _meta: { k: 1, "io.modelcontextprotocol/serverInfo": context.serverInfo },
    },
  );
  const listed = v2026_07_28.encodeResult("tools/list", { tools: [] }, {
    ...context,
    cacheHint: { ttlMs: 5, scope: "public" },
  });
  assert.equal(listed.ttlMs, 5);
  assert.equal(listed.cacheScope, "public");
  const own = v2026_07_28.encodeResult("resources/read", {
    contents: [],
    ttlMs: 9,
    cacheScope: "public",
  }, context);
  assert.equal(own.ttlMs, 9);
  const bad = v2026_07_28.encodeResult("prompts/list", {
    prompts: [],
    ttlMs: -1,
    cacheScope: "shared",
  }, {
    ...context,
    cacheHint: { ttlMs: 1.5, scope: "public" },
  });
  assert.equal(bad.ttlMs, 0);
  assert.equal(bad.cacheScope, "public");
  const retry = v2026_07_28.encodeResult("resources/read", { contents: [] }, {
    ...context,
    retry: true,
    cacheHint: { ttlMs: 100, scope: "public" },
  });
  assert.equal(retry.ttlMs, 0);
  const input = v2026_07_28.encodeResult("resources/read", {
    resultType: "input_required",
    requestState: "x",
  }, context);
  assert.equal("ttlMs" in input, false);
  assert.equal("cacheScope" in input, false);
});

Deno.test("server requests, not-found errors and negotiation", () => {
  const requestedSchema = { type: "object", properties: {} };
  assert.deepEqual(
    v2025_06_18.encodeServerRequest("elicitation/create", {
      mode: "form",
      message: "m",
      requestedSchema,
    }),
    { message: "m", requestedSchema },
  );
  const url = { mode: "url", message: "m", url: "https://x" };
  assert.deepEqual(
    v2026_07_28.encodeServerRequest("elicitation/create", { ...url, elicitationId: "e" }),
    url,
  );
  const minted = v2025_11_25.encodeServerRequest("elicitation/create", url);
  assert.equal(typeof minted.elicitationId, "string", "2025-11-25 URL elicitation gets an id");
  assert.throws(
    () => v2025_06_18.encodeServerRequest("elicitation/create", url),
    /Invalid elicitation\/create for 2025-06-18/,
  );
  assert.throws(
    () => v2025_03_26.encodeServerRequest("elicitation/create", { message: "m", requestedSchema }),
    /not in this version/,
  );
  assert.throws(
    () =>
      v2025_06_18.encodeServerRequest("sampling/createMessage", {
        messages: [{ role: "user", content: [{ type: "text", text: "a" }] }],
        maxTokens: 1,
      }),
    /content/,
    "content arrays arrived in 2025-11-25",
  );
  assert.equal(v2025_11_25.resourceNotFound("x").code, -32002);
  assert.equal(v2026_07_28.resourceNotFound("x").code, -32602);
  assert.deepEqual(v2026_07_28.resourceNotFound("x").data, { uri: "x" });
  const registry = createDefaultRegistry();
  const all = registry.versions();
  assert.equal(registry.negotiate("2025-06-18", all)?.version, "2025-06-18");
  assert.equal(registry.negotiate("2026-07-28", all)?.version, "2025-11-25");
  assert.equal(
    registry.negotiate("1999-01-01", ["2025-03-26", "2025-06-18"])?.version,
    "2025-06-18",
  );
  assert.equal(registry.negotiate("2025-11-25", ["2026-07-28"]), undefined);
});

Deno.test("transport rules per version", () => {
  const rules = ALL_DIALECTS.map((d) => [d.version, { ...d.transportRules }]);
  assert.deepEqual(Object.fromEntries(rules), {
    "2025-03-26": {
      batching: true,
      protocolVersionHeader: false,
      primingEvents: false,
      resumablePostStreams: false,
    },
    "2025-06-18": {
      batching: false,
      protocolVersionHeader: true,
      primingEvents: false,
      resumablePostStreams: false,
    },
    "2025-11-25": {
      batching: false,
      protocolVersionHeader: true,
      primingEvents: true,
      resumablePostStreams: true,
    },
    "2026-07-28": {
      batching: false,
      protocolVersionHeader: true,
      primingEvents: false,
      resumablePostStreams: false,
    },
  });
});

Deno.test("each version's spec is its predecessor's with its changes", () => {
  // What a version does not restate it inherits.
  assert.equal(spec2025_06_18.resourceNotFound, spec2025_03_26.resourceNotFound);
  assert.equal(spec2025_11_25.resourceNotFound, spec2025_03_26.resourceNotFound);
  assert.deepEqual(spec2025_06_18.requestMethods, spec2025_03_26.requestMethods);
  assert.deepEqual(spec2025_11_25.serverRequestMethods, spec2025_06_18.serverRequestMethods);
  assert.deepEqual(
    spec2026_07_28.capabilityKeys.resources,
    spec2025_03_26.capabilityKeys.resources,
  );
  assert.deepEqual(spec2026_07_28.inputRequestMethods, [
    "sampling/createMessage",
    "roots/list",
    "elicitation/create",
  ]);
  assert.ok(!("tasks" in spec2026_07_28.capabilityKeys));
  assert.ok(!spec2026_07_28.features.includes("tasks"));
});

Deno.test("a stateless envelope is judged by the version it claims", () => {
  // A made-up newer stateless version whose envelope also requires a log level.
  const strict = s.object({
    [MetaKey.protocolVersion]: s.string(),
    [MetaKey.logLevel]: s.string(),
  });
  const newer = { ...v2026_07_28, version: "2099-01-01", requestMetaSchema: strict } as Dialect;
  const engine = new Engine(defineServer({ name: "s", version: "1" }), {
    registry: new Registry([v2026_07_28, newer]),
  });
  try {
    const request = (version: string) => ({
      jsonrpc: "2.0" as const,
      id: 1,
      method: "tools/list",
      params: {
        _meta: { [MetaKey.protocolVersion]: version, [MetaKey.clientCapabilities]: {} },
      },
    });
    assert.equal(engine.validateEnvelope(request("2026-07-28")), undefined);
    assert.equal(engine.validateEnvelope(request("2099-01-01"))?.code, -32602);
    // A version that is not a stateless one is judged by the newest.
    assert.equal(engine.validateEnvelope(request("1999-01-01"))?.code, -32602);
  } finally {
    engine.close();
  }
});

Deno.test("initialize is judged by the version that answers it", async () => {
  // A made-up older version whose handshake needs no clientInfo.
  const loose = s.object({ protocolVersion: s.string(), capabilities: s.record(s.unknown()) });
  const older: Dialect = {
    ...v2025_06_18,
    requestParamsSchema: (method) =>
      method === "initialize" ? loose : v2025_06_18.requestParamsSchema(method),
  };
  const engine = new Engine(defineServer({ name: "s", version: "1" }), {
    registry: new Registry([v2025_11_25, older]),
  });
  try {
    const initialize = async (protocolVersion: string) => {
      const session = engine.createSession({ transport: "stdio", onMessage: () => {} });
      const params = { protocolVersion, capabilities: {} };
      const reply = await engine.handle(
        { jsonrpc: "2.0", id: 1, method: "initialize", params },
        { transport: "stdio", session },
      );
      return reply?.message as { result?: { protocolVersion: string }; error?: { code: number } };
    };
    assert.equal((await initialize("2025-06-18")).result?.protocolVersion, "2025-06-18");
    assert.equal((await initialize("2025-11-25")).error?.code, -32602);
    // An unknown version falls back to the newest, and is judged by it.
    assert.equal((await initialize("1999-01-01")).error?.code, -32602);
  } finally {
    engine.close();
  }
});
