// An HTTP server on node:http with @hono/node-server around the fetch handler
// of @anubis/transport-http, with the KV stores on a KV file opened by
// npm:@deno/kv. Usage: `node dist/http_server.js <kv path>`; prints
// `{"url": …}` once listening, and stops on SIGTERM.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { getRequestListener } from "@hono/node-server";
import { openKv } from "@deno/kv";
import { defineServer } from "@anubis/core";
import { createHttpHandler } from "@anubis/transport-http";
import { KvEventStore } from "@anubis/event-store-kv";
import { KvSessionStore } from "@anubis/session-kv";

const kvPath = process.argv[2];
if (kvPath === undefined) throw new Error("usage: http_server.js <kv path>");
const kv = await openKv(kvPath);

let started = 0;
let cancelled = 0;

const server = defineServer({
  name: "node-http",
  version: "1.0.0",
  tools: [
    {
      name: "count",
      description: "Counts to three with progress",
      handler: async (_args, frame) => {
        for (let i = 1; i <= 3; i++) {
          await frame.progress(i, { total: 3 });
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        return "counted to 3";
      },
    },
    {
      name: "hang",
      description: "Reports progress once, then waits until the client goes away (10 s at most)",
      handler: async (_args, frame) => {
        started++;
        await frame.progress(1, { total: 2 });
        const signal = frame.signal;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 10_000);
          signal.addEventListener("abort", () => {
            cancelled++;
            clearTimeout(timer);
            resolve();
          }, { once: true });
        });
        return "done waiting";
      },
    },
    {
      name: "stats",
      description: "How many hang calls started and how many saw their client go away",
      handler: () => JSON.stringify({ started, cancelled, pid: process.pid }),
    },
  ],
});

const handler = createHttpHandler(server, {
  eventStore: new KvEventStore(kv),
  sessionStore: new KvSessionStore(kv),
});
const http = createServer(getRequestListener((request) => handler(request)));
http.listen(0, "127.0.0.1", () => {
  const { port } = http.address() as AddressInfo;
  console.log(JSON.stringify({ url: `http://127.0.0.1:${port}/mcp` }));
});

process.once("SIGTERM", () => {
  handler.close();
  http.closeAllConnections();
  http.close(() => {
    kv.close();
    process.exit(0);
  });
});
