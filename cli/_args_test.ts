import assert from "node:assert/strict";
import { parseArgs } from "./_args.ts";

Deno.test("args: serve --http with every HTTP flag", () => {
  const parsed = parseArgs([
    "serve",
    "server.ts",
    "--http",
    "--host=0.0.0.0",
    "--port",
    "0",
    "--path",
    "/rpc",
    "--event-store",
    "kv:.data/x.kv",
    "--session-store=kv",
    "--allowed-origin",
    "https://a.example",
    "--allowed-origin",
    "https://b.example",
    "--allowed-host",
    "mcp.example",
    "--cors",
    "https://a.example, https://c.example",
    "--cors=https://d.example",
  ]);
  assert.deepEqual(parsed, {
    kind: "serve",
    options: {
      module: "server.ts",
      http: true,
      host: "0.0.0.0",
      port: 0,
      path: "/rpc",
      eventStore: "kv:.data/x.kv",
      sessionStore: "kv",
      allowedOrigins: ["https://a.example", "https://b.example"],
      allowedHosts: ["mcp.example"],
      corsOrigins: ["https://a.example", "https://c.example", "https://d.example"],
      logLevel: "info",
      logFormat: "pretty",
    },
  });
});

Deno.test("args: --log-level and --log-format", () => {
  const parsed = parseArgs(["serve", "s.ts", "--log-level", "debug", "--log-format=json"]);
  assert(parsed.kind === "serve");
  assert.equal(parsed.options.logLevel, "debug");
  assert.equal(parsed.options.logFormat, "json");
  assert.deepEqual(parseArgs(["serve", "s.ts", "--log-format", "xml"]), {
    kind: "error",
    message: "--log-format must be json or pretty, got xml",
  });
  assert.equal(parseArgs(["serve", "s.ts", "--log-level", "loud"]).kind, "error");
});

Deno.test("args: bad HTTP flags are one-line errors", () => {
  const error = (args: string[]) => {
    const parsed = parseArgs(["serve", "server.ts", ...args]);
    return parsed.kind === "error" ? parsed.message : undefined;
  };
  assert.match(error(["--http", "--port", "70000"])!, /--port must be an integer/);
  assert.match(error(["--http", "--path", "mcp"])!, /--path must start with \//);
  assert.match(error(["--http", "--event-store", "redis"])!, /--event-store must be/);
  assert.match(error(["--http", "--session-store", "memory"])!, /--session-store must be/);
  assert.match(error(["--http", "--task-store", "redis"])!, /--task-store must be/);
  assert.match(error(["--task-store", "kv"])!, /need --http/);
  assert.match(error(["--event-store", "memory"])!, /need --http/);
  assert.match(error(["--http", "--port"])!, /--port needs a value/);
  assert.match(error(["--http", "--max-batch-entries", "0"])!, /at least 1/);
  assert.match(error(["--http", "--body-timeout", "-1"])!, /at least 0/);
  assert.match(error(["--max-streams-per-client", "5"])!, /need --http/);
  assert.match(
    error(["--http", "--max-tasks", "0"])!,
    /--max-tasks must be an integer of at least 1/,
  );
  assert.match(error(["--max-tasks-per-caller", "5"])!, /need --http/);
});

Deno.test("args: the task store bounds", () => {
  const parsed = parseArgs([
    "serve",
    "s.ts",
    "--http",
    "--max-tasks",
    "500",
    "--max-tasks-per-caller=20",
  ]);
  assert(parsed.kind === "serve");
  assert.deepEqual(parsed.options.taskLimits, { maxTasks: 500, maxTasksPerCaller: 20 });
  const plain = parseArgs(["serve", "s.ts", "--http"]);
  assert(plain.kind === "serve");
  assert.equal(plain.options.taskLimits, undefined);
});

Deno.test("args: the HTTP limit flags", () => {
  const parsed = parseArgs([
    "serve",
    "server.ts",
    "--http",
    "--max-sessions-per-client=20",
    "--max-streams-per-client",
    "3",
    "--max-batch-entries",
    "10",
    "--body-timeout",
    "0",
    "--header-timeout",
    "5000",
    "--idle-timeout=2000",
  ]);
  assert.equal(parsed.kind, "serve");
  assert.deepEqual(parsed.kind === "serve" && parsed.options.limits, {
    maxSessionsPerClient: 20,
    maxStreamsPerClient: 3,
    maxBatchEntries: 10,
    bodyTimeoutMs: 0,
    headersTimeoutMs: 5000,
    idleTimeoutMs: 2000,
  });
});

Deno.test("args: --request-state-secret and its previous secret, 32 characters at least", () => {
  const secret = "s".repeat(32);
  const parsed = parseArgs([
    "serve",
    "server.ts",
    "--http",
    `--request-state-secret=${secret}`,
    "--request-state-previous-secret",
    "p".repeat(40),
  ]);
  assert.equal(parsed.kind, "serve");
  if (parsed.kind !== "serve") return;
  assert.equal(parsed.options.requestStateSecret, secret);
  assert.equal(parsed.options.requestStatePreviousSecret, "p".repeat(40));
  assert.deepEqual(parseArgs(["serve", "s.ts", "--request-state-secret", "short"]), {
    kind: "error",
    message: "--request-state-secret must be at least 32 characters",
  });
});

Deno.test("args: --auth-issuer, --auth-jwks and --auth-audience", () => {
  const parsed = parseArgs([
    "serve",
    "server.ts",
    "--http",
    "--auth-issuer=https://as.example",
    "--auth-jwks",
    "https://as.example/jwks",
    "--auth-audience",
    "https://mcp.example/mcp",
  ]);
  assert.equal(parsed.kind, "serve");
  if (parsed.kind !== "serve") return;
  assert.equal(parsed.options.authIssuer, "https://as.example");
  assert.equal(parsed.options.authJwks, "https://as.example/jwks");
  assert.equal(parsed.options.authAudience, "https://mcp.example/mcp");
  const error = (args: string[]) => {
    const result = parseArgs(["serve", "server.ts", ...args]);
    return result.kind === "error" ? result.message : undefined;
  };
  assert.match(error(["--auth-issuer", "https://as.example"])!, /need --http/);
  assert.match(error(["--http", "--auth-issuer", "https://as.example"])!, /go together/);
  assert.match(error(["--http", "--auth-issuer", "x", "--auth-jwks", "y"])!, /need URLs/);
});

Deno.test("args: --auth-scopes a,b (repeatable) needs --auth-issuer and scope names", () => {
  const base = ["serve", "s.ts", "--http", "--auth-issuer", "https://as.example", "--auth-jwks"];
  const parsed = parseArgs([...base, "https://as.example/jwks", "--auth-scopes", "mcp, mcp:admin"]);
  if (parsed.kind !== "serve") throw new Error(JSON.stringify(parsed));
  assert.deepEqual(parsed.options.authScopes, ["mcp", "mcp:admin"]);
  const twice = parseArgs([
    ...base,
    "https://as.example/jwks",
    "--auth-scopes=a",
    "--auth-scopes=b",
  ]);
  if (twice.kind !== "serve") throw new Error(JSON.stringify(twice));
  assert.deepEqual(twice.options.authScopes, ["a", "b"]);
  const error = (args: string[]) => {
    const result = parseArgs(["serve", "s.ts", "--http", ...args]);
    return result.kind === "error" ? result.message : undefined;
  };
  assert.match(error(["--auth-scopes", "mcp"])!, /needs --auth-issuer/);
  const auth = ["--auth-issuer", "https://as.example", "--auth-jwks", "https://as.example/jwks"];
  assert.match(error([...auth, "--auth-scopes", ","])!, /scope names: none given/);
  assert.match(error([...auth, "--auth-scopes", 'a"b'])!, /scope names: a"b/);
});

Deno.test("args: --rate-limit N/s and --rate-limit-burst N", () => {
  const parsed = parseArgs(["serve", "s.ts", "--http", "--rate-limit", "0.5/s"]);
  assert.equal(parsed.kind, "serve");
  if (parsed.kind === "serve") assert.deepEqual(parsed.options.rateLimit, { perSecond: 0.5 });
  const both = parseArgs(["serve", "s.ts", "--http", "--rate-limit=20", "--rate-limit-burst", "5"]);
  if (both.kind !== "serve") throw new Error(JSON.stringify(both));
  assert.deepEqual(both.options.rateLimit, { perSecond: 20, burst: 5 });
  const error = (args: string[]) => {
    const result = parseArgs(["serve", "s.ts", ...args]);
    return result.kind === "error" ? result.message : undefined;
  };
  assert.match(error(["--http", "--rate-limit", "fast"])!, /positive rate such as 20\/s/);
  assert.match(error(["--http", "--rate-limit", "0/s"])!, /positive rate/);
  assert.match(error(["--http", "--rate-limit", "5/s", "--rate-limit-burst", "1.5"])!, /integer/);
  assert.match(error(["--http", "--rate-limit-burst", "5"])!, /needs --rate-limit/);
  assert.match(error(["--rate-limit", "5/s"])!, /needs --http/);
});

Deno.test("args: --trusted-proxy takes comma-separated CIDRs, repeatable, with --http", () => {
  const parsed = parseArgs([
    "serve",
    "s.ts",
    "--http",
    "--trusted-proxy",
    "10.0.0.0/8, fd00::/8",
    "--trusted-proxy=127.0.0.1",
  ]);
  if (parsed.kind !== "serve") throw new Error(JSON.stringify(parsed));
  assert.deepEqual(parsed.options.trustedProxies, ["10.0.0.0/8", "fd00::/8", "127.0.0.1"]);
  assert.equal(parseArgs(["serve", "s.ts", "--http"]).kind === "serve", true);
  const plain = parseArgs(["serve", "s.ts", "--http"]);
  if (plain.kind === "serve") assert.equal(plain.options.trustedProxies, undefined);
  const stdio = parseArgs(["serve", "s.ts", "--trusted-proxy", "10.0.0.0/8"]);
  assert.equal(stdio.kind === "error" && /needs --http/.test(stdio.message), true);
  const limits = parseArgs(["serve", "s.ts", "--http", "--max-sessions", "40", "--max-streams=6"]);
  if (limits.kind !== "serve") throw new Error(JSON.stringify(limits));
  assert.deepEqual(limits.options.limits, { maxSessions: 40, maxStreams: 6 });
});
