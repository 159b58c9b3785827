/**
 * Interop over Streamable HTTP between `cli serve examples/everything.ts
 * --http` (a real child process on a free port) and the official TypeScript
 * SDK clients: v1 at each legacy version, v2 pinned to 2026-07-28. The steps
 * are those of the stdio tests (`everything_sdk_v1.ts`, `everything_sdk_v2.ts`).
 */

import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StreamableHTTPClientTransport as StreamableHttpV2 } from "@modelcontextprotocol/client";
import { connectV1, runV1Steps } from "../helpers/everything_sdk_v1.ts";
import { connectV2, runV2Steps, VERSION } from "../helpers/everything_sdk_v2.ts";
import { startHttpServer } from "../helpers/everything_http_server.ts";

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
