/**
 * Lost events seen by the official v2 client 2.4.0 over real HTTP: an
 * in-process server whose `MemoryEventStore` keeps 3 events per session
 * records 6 while the client is away, the client resumes its GET stream
 * with `Last-Event-ID: 1`, and its logging handler gets the
 * `notifications/message` warning naming the lost ids 2..3; its resumption
 * tokens go 1 (the priming event), then 4, 5, 6 (the warning moves no
 * cursor).
 */

import assert from "node:assert/strict";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { MemoryEventStore } from "@anubis/event-store-memory";
import { start, until } from "../helpers/http_helpers.ts";

Deno.test("resume gap (SDK v2, 2025-11-25): the client's logging handler hears which events were lost", async () => {
  const eventStore = new MemoryEventStore({ maxEventsPerSession: 3 });
  const server = start({ eventStore });
  const client = new Client({ name: "gap-host", version: "1.0.0" }, {
    versionNegotiation: { mode: "legacy" },
  });
  const logs: { level: string; logger?: string; data: unknown }[] = [];
  client.setNotificationHandler("notifications/message", (notification) => {
    logs.push(notification.params);
  });
  const transport = new StreamableHTTPClientTransport(new URL(server.url));
  try {
    await client.connect(transport);
    assert.equal(client.getNegotiatedProtocolVersion(), "2025-11-25");
    const sessionId = transport.sessionId!;
    const notify = server.handler.engine.server.notify;
    for (let i = 0; i < 6; i++) notify.toolsListChanged();
    let latest = 0;
    for (let i = 0; i < 500 && latest < 6; i++) {
      latest = await eventStore.latestId(sessionId);
      if (latest < 6) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.equal(latest, 6);
    const before = logs.length;
    const tokens: string[] = [];
    await transport.resumeStream("1", { onresumptiontoken: (token) => tokens.push(token) });
    await until(() => tokens.length >= 4 && logs.length > before);
    assert.deepEqual(tokens.slice(0, 4), ["1", "4", "5", "6"]);
    assert.deepEqual(logs[before], {
      level: "warning",
      logger: "anubis.resume",
      data: { lostEvents: { from: 2, to: 3 } },
    });
  } finally {
    await client.close();
    await server.close();
  }
});
