// Drives the servers with the official clients, from Node. Prints one JSON
// line with what it saw; node_consumer_test.ts checks it.
//   node dist/drive.js stdio <stdio server .js>
//   node dist/drive.js http <url>
//   node dist/drive.js resume <url> <session id>
//   node dist/drive.js readme <url>
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as StreamableHttpV2,
} from "@modelcontextprotocol/client";

type Content = { type: string; text?: string }[];
const textOf = (result: unknown) =>
  (((result as { content?: Content }).content) ?? []).map((part) => part.text).join("");

const STATELESS = "2026-07-28";
const META = {
  "io.modelcontextprotocol/protocolVersion": STATELESS,
  "io.modelcontextprotocol/clientCapabilities": {},
};

/** Waits for `predicate` (every 20 ms, `ms` at most). */
async function until(predicate: () => Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await predicate()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return false;
}

/**
 * POSTs `body` and reads its SSE stream until a progress notification arrives
 * (while the tool still waits, so the event was flushed, not held back to the
 * end), then aborts the stream. Returns what it saw.
 */
async function progressThenAbort(
  url: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<{ status: number; contentType: string | null; progressBeforeEnd: boolean }> {
  const controller = new AbortController();
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body: JSON.stringify(body),
    signal: controller.signal,
  });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  const timer = setTimeout(() => controller.abort(), 5_000);
  let progressBeforeEnd = false;
  try {
    while (!text.includes("notifications/progress")) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    progressBeforeEnd = text.includes("notifications/progress") && !text.includes('"result"');
  } catch {
    // aborted by the timer: no progress came in time
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
  return {
    status: response.status,
    contentType: response.headers.get("content-type"),
    progressBeforeEnd,
  };
}

async function stdio(serverJs: string) {
  const client = new Client({ name: "node-v1-stdio", version: "1.0.0" });
  const transport = new StdioClientTransport({ command: process.execPath, args: [serverJs] });
  await client.connect(transport);
  try {
    const tools = await client.listTools();
    const result = await client.callTool({ name: "add", arguments: { a: 2, b: 3 } });
    return {
      server: client.getServerVersion(),
      tools: tools.tools.map((tool: { name: string }) => tool.name),
      call: textOf(result),
    };
  } finally {
    await client.close();
  }
}

async function http(url: string) {
  const out: Record<string, unknown> = {};

  // The official v1 client, Streamable HTTP in a 2025 era, the session in KV.
  const v1 = new Client({ name: "node-v1-http", version: "1.0.0" });
  const v1Transport = new StreamableHTTPClientTransport(new URL(url));
  await v1.connect(v1Transport);
  const progress: number[] = [];
  const counted = await v1.callTool({ name: "count", arguments: {} }, undefined, {
    onprogress: ({ progress: p }: { progress: number }) => void progress.push(p),
  });
  out.v1 = {
    protocolVersion: v1Transport.protocolVersion,
    sessionId: typeof v1Transport.sessionId,
    tools: (await v1.listTools()).tools.map((tool: { name: string }) => tool.name),
    count: textOf(counted),
    progress,
  };
  out.sessionId = v1Transport.sessionId;

  // A legacy SSE response stream that the client aborts mid-way.
  out.legacyAbort = await progressThenAbort(url, {
    jsonrpc: "2.0",
    id: 100,
    method: "tools/call",
    params: { name: "hang", arguments: {}, _meta: { progressToken: "legacy" } },
  }, {
    "mcp-session-id": v1Transport.sessionId!,
    "mcp-protocol-version": v1Transport.protocolVersion!,
  });
  out.v1AfterAbort = textOf(await v1.callTool({ name: "count", arguments: {} }));
  await v1.close(); // the session stays (no DELETE), for `resume`

  // The official v2 client in the legacy era.
  const legacy = new ClientV2({ name: "node-v2-legacy", version: "2.0.0" });
  await legacy.connect(new StreamableHttpV2(new URL(url)));
  out.v2Legacy = {
    era: legacy.getProtocolEra(),
    version: legacy.getNegotiatedProtocolVersion(),
    count: textOf(await legacy.callTool({ name: "count", arguments: {} })),
  };
  await legacy.close();

  // The official v2 client pinned to 2026-07-28 (stateless).
  const modern = new ClientV2({ name: "node-v2-modern", version: "2.0.0" }, {
    versionNegotiation: { mode: { pin: STATELESS } },
  });
  await modern.connect(new StreamableHttpV2(new URL(url)));
  const modernProgress: number[] = [];
  const modernCount = await modern.callTool({ name: "count", arguments: {} }, {
    onprogress: ({ progress: p }: { progress: number }) => void modernProgress.push(p),
  });
  out.v2Modern = {
    era: modern.getProtocolEra(),
    version: modern.getNegotiatedProtocolVersion(),
    tools: (await modern.listTools()).tools.map((tool: { name: string }) => tool.name),
    count: textOf(modernCount),
    progress: modernProgress,
  };

  // A stateless SSE stream the client aborts: the server cancels the call.
  out.statelessAbort = await progressThenAbort(url, {
    jsonrpc: "2.0",
    id: 200,
    method: "tools/call",
    params: { name: "hang", arguments: {}, _meta: { ...META, progressToken: "stateless" } },
  }, { "mcp-protocol-version": STATELESS, "mcp-method": "tools/call", "mcp-name": "hang" });
  const stats = async () =>
    JSON.parse(textOf(await modern.callTool({ name: "stats", arguments: {} }))) as {
      started: number;
      cancelled: number;
    };
  out.cancelledSeen = await until(async () => (await stats()).cancelled >= 1, 5_000);
  const { started, cancelled } = await stats();
  out.stats = { started, cancelled };
  await modern.close();
  return out;
}

async function resume(url: string, sessionId: string) {
  const client = new Client({ name: "node-v1-http", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(url), { sessionId });
  await client.connect(transport); // a session id given: no initialize, the store has it
  transport.setProtocolVersion("2025-11-25");
  try {
    const stats = JSON.parse(textOf(await client.callTool({ name: "stats", arguments: {} })));
    return { sessionId: transport.sessionId === sessionId, pid: stats.pid };
  } finally {
    await transport.terminateSession();
    await client.close();
  }
}

/** The README's server: `greet` through the v1 client (2025) and the v2 client (2026). */
async function readme(url: string) {
  const v1 = new Client({ name: "node-v1-readme", version: "1.0.0" });
  const v1Transport = new StreamableHTTPClientTransport(new URL(url));
  await v1.connect(v1Transport);
  const legacy = textOf(await v1.callTool({ name: "greet", arguments: { name: "v1" } }));
  await v1Transport.terminateSession();
  await v1.close();
  const modern = new ClientV2({ name: "node-v2-readme", version: "2.0.0" }, {
    versionNegotiation: { mode: { pin: STATELESS } },
  });
  await modern.connect(new StreamableHttpV2(new URL(url)));
  const stateless = textOf(await modern.callTool({ name: "greet", arguments: { name: "v2" } }));
  const version = modern.getNegotiatedProtocolVersion();
  await modern.close();
  return { v1: [v1Transport.protocolVersion, legacy], v2: [version, stateless] };
}

const [mode, ...args] = process.argv.slice(2);
const result = mode === "stdio"
  ? await stdio(args[0])
  : mode === "http"
  ? await http(args[0])
  : mode === "resume"
  ? await resume(args[0], args[1])
  : mode === "readme"
  ? await readme(args[0])
  : undefined;
if (result === undefined) throw new Error(`unknown mode ${mode}`);
console.log(JSON.stringify(result));
