/**
 * Interop over Streamable HTTP between `cli serve examples/everything.ts
 * --http` (a real child process on a free port) and the official TypeScript
 * SDK clients: v1 at each legacy version, v2 pinned to 2026-07-28. The steps
 * are those of the stdio tests (`everything_sdk_v1.ts`, `everything_sdk_v2.ts`).
 */

import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StreamableHTTPClientTransport as StreamableHttpV2 } from "@modelcontextprotocol/client";
import { connectV1, runV1Steps } from "./everything_sdk_v1.ts";
import { connectV2, runV2Steps, VERSION } from "./everything_sdk_v2.ts";

const ROOT = new URL("..", import.meta.url).pathname;

/** A server process serving the everything example over HTTP on a free port. */
async function startHttpServer(): Promise<{ url: URL; stop(): Promise<void> }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "cli/main.ts", "serve", "examples/everything.ts", "--http", "--port", "0"],
    cwd: ROOT,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const lines = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  let url: URL | undefined;
  while (!url) {
    const { value, done } = await lines.read();
    if (done) throw new Error(`the server did not start:\n${seen}`);
    seen += value;
    const found = seen.match(/listening on (http:\/\/\S+)/);
    if (found) url = new URL(found[1]);
  }
  // Keep draining stderr so the child never blocks on it.
  const drained = (async () => {
    while (!(await lines.read()).done) { /* discard */ }
  })();
  return {
    url,
    async stop() {
      child.kill("SIGTERM");
      await child.status;
      await drained;
    },
  };
}

for (const version of ["2025-03-26", "2025-06-18", "2025-11-25"]) {
  Deno.test(`everything over HTTP, SDK v1 client at ${version}`, async (t) => {
    const server = await startHttpServer();
    try {
      const connected = await connectV1(new StreamableHTTPClientTransport(server.url), version);
      try {
        await runV1Steps(t, version, connected);
      } finally {
        await connected.client.close();
      }
    } finally {
      await server.stop();
    }
  });
}

Deno.test(`everything over HTTP, SDK v2 client at ${VERSION}`, async (t) => {
  const server = await startHttpServer();
  try {
    const connected = await connectV2(new StreamableHttpV2(server.url));
    try {
      await runV2Steps(t, connected);
    } finally {
      await connected.client.close();
    }
  } finally {
    await server.stop();
  }
});
