/**
 * Node users install the packed packages: every member packed with `deno pack`
 * (the sibling `@anubis/*` dependencies added by `node_consumer/pack.ts`),
 * `npm install`ed from the tarballs into a fresh Node project with the
 * official clients, type-checked with `tsc --strict` (NodeNext, library
 * declarations checked too) together with the server of the README's "Use
 * from Node" section, and run under plain `node`: stdio, HTTP on `node:http`
 * through `@hono/node-server` with the KV stores on `npm:@deno/kv`, the
 * README's server, bearer auth with `jwtVerifier` (a real RS256 token, made
 * with `jose`, checked against a JWKS served here on loopback; without `jose`
 * installed, 503 without a path, never 401), and the CLI (which says it needs
 * Deno). Ignored only when `npm` is not installed.
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import * as jose from "jose";
import { type CommandResult, runCommand } from "../helpers/command.ts";
import { headers2026, post, request2026 } from "../helpers/http_helpers.ts";
import { packWorkspace } from "./node_consumer/pack.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url)).replace(/\/$/, "");
const FIXTURE = fileURLToPath(new URL("./node_consumer", import.meta.url));
// A bound on a hung child, not a timing: npm install and tsc took 116 s together on a
// machine busy with other work (120 s was too tight there), about 45 s when quiet.
const BUDGET_MS = 300_000;

/** What the project installs besides the tarballs (the clients as in tests/deno.json). */
const NPM_PACKAGES = [
  "typescript@5.9.3",
  "@types/node@20.19.43",
  "@hono/node-server@2.1.11",
  "hono@4.13.23",
  "@modelcontextprotocol/sdk@1.32.2",
  "@modelcontextprotocol/client@2.4.0",
  "@deno/kv@0.14.0",
  "@opentelemetry/api@1.9.1",
  "@opentelemetry/sdk-trace-base@2.12.1",
];

/** The sibling dependencies each tarball must name (ARCHITECTURE.md's arrows). */
const SIBLINGS: Record<string, string[]> = {
  "@anubis/core": [],
  "@anubis/dialects": ["@anubis/core"],
  "@anubis/event-store-memory": ["@anubis/core"],
  "@anubis/event-store-kv": ["@anubis/core"],
  "@anubis/session-kv": ["@anubis/core"],
  "@anubis/redis": ["@anubis/core"],
  "@anubis/transport-stdio": ["@anubis/core", "@anubis/dialects"],
  "@anubis/transport-http": ["@anubis/core", "@anubis/dialects"],
  "@anubis/testing": ["@anubis/core", "@anubis/dialects"],
  "@anubis/telemetry": ["@anubis/core"],
  // telemetry: loaded when Deno's OpenTelemetry is on; testing: named by the test init writes.
  "@anubis/cli": [
    "@anubis/core",
    "@anubis/event-store-kv",
    "@anubis/event-store-memory",
    "@anubis/redis",
    "@anubis/session-kv",
    "@anubis/telemetry",
    "@anubis/testing",
    "@anubis/transport-http",
    "@anubis/transport-stdio",
  ],
};

function has(command: string): boolean {
  try {
    return new Deno.Command(command, { args: ["--version"], stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
}

const hasNpm = has("npm");
if (!hasNpm) {
  console.warn("node_consumer_test: npm is not installed, so the Node consumer test is ignored");
}

/** The code block of the README's "Use from Node" section that the test type-checks and runs. */
async function readmeNodeServer(): Promise<string> {
  const readme = await Deno.readTextFile(`${ROOT}/README.md`);
  const section = /^## Use from Node\n([\s\S]*?)(?=^## )/m.exec(readme);
  assert.ok(section, 'README.md has no "## Use from Node" section');
  const block = /^```ts ignore\n([\s\S]*?)^```$/m.exec(section[1]);
  assert.ok(block, 'the "Use from Node" section has no ```ts ignore block');
  return block[1];
}

/** When the test must be done; every process it starts is killed then. */
let deadline = Date.now() + BUDGET_MS;
const remaining = () => AbortSignal.timeout(Math.max(1, deadline - Date.now()));

function run(command: string, args: string[], cwd: string): Promise<CommandResult> {
  return runCommand(command, args, {
    cwd,
    signal: remaining(),
    env: { npm_config_update_notifier: "false" },
  });
}

async function ok(command: string, args: string[], cwd: string): Promise<string> {
  const out = await run(command, args, cwd);
  assert.equal(out.code, 0, `${command} ${args.join(" ")}\n${out.stdout}\n${out.stderr}`);
  return out.stdout;
}

/** A Node server process: its first stdout line, and a stop that ends it with SIGTERM. */
interface NodeServer {
  firstLine: string;
  stop(): Promise<{ code: number; stderr: string }>;
}

async function startNode(
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
  waitForLine = true,
): Promise<NodeServer> {
  const child = new Deno.Command("node", {
    args,
    cwd,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: remaining(),
  }).spawn();
  const stderr = new Response(child.stderr).text();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  while (waitForLine && !out.includes("\n")) {
    const { done, value } = await lines.read();
    if (done) break;
    out += value;
  }
  const drained = (async () => {
    while (!(await lines.read()).done);
  })();
  return {
    firstLine: out.split("\n")[0],
    async stop() {
      try {
        child.kill("SIGTERM");
      } catch {
        // already ended
      }
      const status = await child.status;
      await drained;
      return { code: status.code, stderr: await stderr };
    },
  };
}

async function untilListening(port: number): Promise<void> {
  while (Date.now() < deadline) {
    try {
      (await Deno.connect({ hostname: "127.0.0.1", port })).close();
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  throw new Error(`nothing listened on port ${port}`);
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr;
  listener.close();
  return port;
}

Deno.test({
  name: "node consumer: the packed packages install, type-check and serve under Node 20",
  ignore: !hasNpm,
  async fn(t) {
    deadline = Date.now() + BUDGET_MS;
    const temp = await Deno.makeTempDir({ prefix: "anubis_node_consumer_" });
    const project = `${temp}/project`;
    try {
      const packed = await packWorkspace(ROOT, await Deno.makeTempDir({ dir: temp }));
      await t.step("deno pack: every member, with its sibling dependencies", () => {
        assert.deepEqual(packed.diagnostics, []);
        const added = Object.fromEntries(
          packed.packages.map((p) => [p.name, Object.keys(p.added)]),
        );
        assert.deepEqual(added, SIBLINGS);
        for (const p of packed.packages) {
          assert.ok(Object.values(p.added).every((version) => version === p.version));
        }
        console.log(`deno pack: ${packed.untyped.length} modules packed without types`);
      });

      await Deno.mkdir(`${project}/src`, { recursive: true });
      await Deno.writeTextFile(
        `${project}/package.json`,
        JSON.stringify({ name: "anubis-node-consumer", private: true, type: "module" }) + "\n",
      );
      await Deno.copyFile(`${FIXTURE}/tsconfig.json`, `${project}/tsconfig.json`);
      const sources = [
        "stdio_server.ts",
        "http_server.ts",
        "auth_server.ts",
        "drive.ts",
        "otel_check.ts",
      ];
      for (const file of sources) {
        await Deno.copyFile(`${FIXTURE}/src/${file}`, `${project}/src/${file}`);
      }
      await Deno.writeTextFile(`${project}/src/readme_server.ts`, await readmeNodeServer());

      await t.step("npm install the tarballs and the clients", async () => {
        await ok("npm", [
          "install",
          "--no-audit",
          "--no-fund",
          "--save-exact",
          "--loglevel=error",
          ...packed.packages.map((p) => p.tarball),
          ...NPM_PACKAGES,
        ], project);
      });

      await t.step(
        "tsc --strict (NodeNext) over the consumers and the README's server",
        async () => {
          const tsc = await run("node", ["node_modules/typescript/bin/tsc", "-p", "."], project);
          assert.equal(tsc.code, 0, tsc.stdout + tsc.stderr);
        },
      );

      await t.step("stdio server under node, official v1 client", async () => {
        const out = await ok("node", ["dist/drive.js", "stdio", "dist/stdio_server.js"], project);
        assert.deepEqual(JSON.parse(out), {
          server: { name: "node-stdio", version: "1.0.0" },
          tools: ["add"],
          call: `5 (on Node ${(await ok("node", ["--version"], project)).trim()})`,
        });
      });

      await t.step(
        "telemetry under node: the SDK the program registers gets the spans",
        async () => {
          const out = JSON.parse(await ok("node", ["dist/otel_check.js"], project));
          assert.deepEqual(out, {
            result: "5",
            name: "tools/call add",
            kind: 1, // SERVER
            traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
            parentSpanId: "00f067aa0ba902b7",
            tool: "add",
            operation: "execute_tool",
          });
        },
      );

      await t.step("the README's server under node, v1 and v2 clients", async () => {
        const port = freePort();
        const server = await startNode(
          ["dist/readme_server.js"],
          project,
          { PORT: String(port) },
          false,
        );
        try {
          await untilListening(port);
          const out = await ok("node", [
            "dist/drive.js",
            "readme",
            `http://127.0.0.1:${port}/mcp`,
          ], project);
          assert.deepEqual(JSON.parse(out), {
            v1: ["2025-11-25", "Hello, v1!"],
            v2: ["2026-07-28", "Hello, v2!"],
          });
        } finally {
          await server.stop();
        }
      });

      const kvPath = `${temp}/node.kv`;
      let sessionId = "";
      await t.step(
        "node:http + @hono/node-server, KV stores on @deno/kv: v1, v2 legacy, v2 2026, SSE, aborts",
        async () => {
          const server = await startNode(["dist/http_server.js", kvPath], project);
          let stopped = false;
          try {
            const { url } = JSON.parse(server.firstLine);
            const out = JSON.parse(await ok("node", ["dist/drive.js", "http", url], project));
            sessionId = out.sessionId;
            assert.match(sessionId, /^[0-9a-f]{32}$/);
            const tools = ["count", "hang", "stats"];
            assert.deepEqual(out, {
              sessionId,
              v1: {
                protocolVersion: "2025-11-25",
                sessionId: "string",
                tools,
                count: "counted to 3",
                progress: [1, 2, 3],
              },
              legacyAbort: {
                status: 200,
                contentType: "text/event-stream",
                progressBeforeEnd: true,
              },
              v1AfterAbort: "counted to 3",
              v2Legacy: { era: "legacy", version: "2025-11-25", count: "counted to 3" },
              v2Modern: {
                era: "modern",
                version: "2026-07-28",
                tools,
                count: "counted to 3",
                progress: [1, 2, 3],
              },
              statelessAbort: {
                status: 200,
                contentType: "text/event-stream",
                progressBeforeEnd: true,
              },
              // The stateless stream's disconnect cancelled its call; the legacy
              // one's did not (its stream is resumable), and neither crashed.
              cancelledSeen: true,
              stats: { started: 2, cancelled: 1 },
            });

            // What the stores wrote from Node, read by Deno from the same file.
            const kv = await Deno.openKv(kvPath);
            try {
              const session = await kv.get(["anubis", "sessions", sessionId]);
              assert.ok(session.value !== null, "the session record is in KV");
              const events = await Array.fromAsync(
                kv.list({ prefix: ["anubis", "events", sessionId] }),
              );
              assert.ok(events.length > 0, "the session's SSE events are in KV");
            } finally {
              kv.close();
            }
            const end = await server.stop();
            stopped = true;
            assert.equal(end.code, 0, end.stderr);
            assert.equal(end.stderr, "");
          } finally {
            if (!stopped) await server.stop();
          }
        },
      );

      await t.step("a second node server on the KV file restores the session", async () => {
        assert.ok(sessionId !== "", "the previous step made a session");
        const server = await startNode(["dist/http_server.js", kvPath], project);
        try {
          const { url } = JSON.parse(server.firstLine);
          const out = JSON.parse(
            await ok("node", ["dist/drive.js", "resume", url, sessionId], project),
          );
          assert.equal(out.sessionId, true);
          assert.equal(typeof out.pid, "number");
        } finally {
          const end = await server.stop();
          assert.equal(end.code, 0, end.stderr);
        }
      });

      await t.step(
        "jwtVerifier under node: jose is a dependency, a real RS256 token is verified; without jose, 503 without a path",
        async () => {
          const manifest = JSON.parse(
            await Deno.readTextFile(`${project}/node_modules/@anubis/transport-http/package.json`),
          );
          assert.ok(manifest.dependencies?.jose, "the packed transport depends on jose");
          const issuer = "https://issuer.test";
          const { publicKey, privateKey } = await jose.generateKeyPair("RS256");
          const jwk = { ...(await jose.exportJWK(publicKey)), kid: "k1", alg: "RS256" };
          const jwks = Deno.serve(
            { hostname: "127.0.0.1", port: 0, onListen() {} },
            () => Response.json({ keys: [jwk] }),
          );
          const whoami = async (url: string, bearer?: string) => {
            const response = await post(
              url,
              request2026(7, "tools/call", { name: "whoami", arguments: {} }),
              {
                ...headers2026("tools/call", "whoami"),
                ...(bearer === undefined ? {} : { authorization: `Bearer ${bearer}` }),
              },
            );
            return { status: response.status, body: await response.text() };
          };
          // Where npm put jose (hoisted, or under the transport).
          const joseDirs = [
            `${project}/node_modules/jose`,
            `${project}/node_modules/@anubis/transport-http/node_modules/jose`,
          ].filter((dir) => {
            try {
              return Deno.statSync(dir).isDirectory;
            } catch {
              return false;
            }
          });
          assert.ok(joseDirs.length > 0, "npm installed jose");
          try {
            const jwksUrl = `http://127.0.0.1:${jwks.addr.port}/jwks`;
            const server = await startNode(["dist/auth_server.js", issuer, jwksUrl], project);
            let url = "";
            try {
              url = JSON.parse(server.firstLine).url;
              const token = await new jose.SignJWT({ scope: "mcp:tools" })
                .setProtectedHeader({ alg: "RS256", kid: "k1" })
                .setIssuer(issuer)
                .setAudience(url)
                .setSubject("ada")
                .setIssuedAt()
                .setExpirationTime("10m")
                .sign(privateKey);
              const ok = await whoami(url, token);
              assert.equal(ok.status, 200, ok.body);
              assert.equal(JSON.parse(ok.body).result.content[0].text, "ada mcp:tools");
              const anonymous = await whoami(url);
              assert.equal(anonymous.status, 401, anonymous.body);
            } finally {
              const end = await server.stop();
              assert.equal(end.code, 0, end.stderr);
            }

            // jose gone (a broken install): the server's fault, not the token's.
            for (const dir of joseDirs) await Deno.rename(dir, `${dir}.off`);
            const broken = await startNode(["dist/auth_server.js", issuer, jwksUrl], project);
            let brokenLog = "";
            try {
              const brokenUrl = JSON.parse(broken.firstLine).url;
              const token = await new jose.SignJWT({ scope: "mcp:tools" })
                .setProtectedHeader({ alg: "RS256", kid: "k1" })
                .setIssuer(issuer)
                .setAudience(brokenUrl)
                .setSubject("ada")
                .setExpirationTime("10m")
                .sign(privateKey);
              const refused = await whoami(brokenUrl, token);
              assert.equal(refused.status, 503, refused.body);
              assert.doesNotMatch(refused.body, /node_modules|\/tmp|jose|file:/);
            } finally {
              brokenLog = (await broken.stop()).stderr;
            }
            // The operator's log names the cause.
            assert.match(brokenLog, /the JWT verifier failed/);
          } finally {
            for (const dir of joseDirs) await Deno.rename(`${dir}.off`, dir).catch(() => {});
            await jwks.shutdown();
          }
        },
      );

      await t.step("the packed cli under node: one line naming Deno, exit 1", async () => {
        const cli = await run("node", ["node_modules/@anubis/cli/main.js", "serve", "x"], project);
        assert.equal(cli.code, 1);
        assert.equal(cli.stdout, "");
        assert.match(
          cli.stderr,
          /^anubis: the CLI runs on Deno; .*`npx deno@2\.9\.6 run -A jsr:@anubis\/cli serve <module>`/,
        );
        assert.equal(cli.stderr.trim().split("\n").length, 1);
      });
    } finally {
      await Deno.remove(temp, { recursive: true });
    }
  },
});
