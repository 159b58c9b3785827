/**
 * Two `cli serve` processes on one KV file behind one "load balancer": one
 * client session driven through both with the official v1 client, and an
 * instance killed with SIGKILL mid-stream, restarted and resumed with
 * `Last-Event-ID`.
 */

import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  ElicitRequestSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { answerElicitation, ELICITATION_MESSAGE, until } from "../helpers/everything_answers.ts";
import { headers2026, initialize, post, request2026, SseReader } from "../helpers/http_helpers.ts";
import {
  type Instance,
  type InstanceStores,
  Router,
  startInstance,
} from "../helpers/instances_process.ts";

const VERSION = "2025-11-25";
const WATCHED = "test://watched-resource";

/** Runs `body` with two instances on a fresh KV file, stopping both after. */
async function withTwoInstances(
  body: (a: Instance, b: Instance, kvPath: string) => Promise<void>,
  stores: InstanceStores = "both",
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "anubis-instances-" });
  const kvPath = `${dir}/a.kv`;
  const instances: Instance[] = [];
  try {
    // One after the other: both open (and migrate) the same new file.
    instances.push(await startInstance(kvPath, stores));
    instances.push(await startInstance(kvPath, stores));
    await body(instances[0], instances[1], kvPath);
  } finally {
    for (const instance of instances) await instance.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

/** A raw legacy POST of one request on a session. */
function call(url: string, sessionId: string, id: number, method: string, params = {}) {
  return post(url, { jsonrpc: "2.0", id, method, params }, {
    "mcp-session-id": sessionId,
    "mcp-protocol-version": VERSION,
  });
}

Deno.test("instances: one session through two processes with the official v1 client", async () => {
  await withTwoInstances(async (a, b) => {
    const router = new Router(a.url);
    const client = new Client({ name: "balanced", version: "1.0.0" });
    const toolChanges: unknown[] = [];
    const updates: string[] = [];
    client.setNotificationHandler(ToolListChangedNotificationSchema, (n: unknown) => {
      toolChanges.push(n);
    });
    client.setNotificationHandler(
      ResourceUpdatedNotificationSchema,
      (n: { params: { uri: string } }) => {
        updates.push(n.params.uri);
      },
    );
    const transport = new StreamableHTTPClientTransport(new URL(a.url), {
      fetch: router.fetch,
    });
    try {
      // initialize and the GET stream on A (the SDK opens it after `initialized`).
      await client.connect(transport);
      const sessionId = transport.sessionId!;
      assert.match(sessionId, /^[0-9a-f]{32}$/);
      await until(() => router.answered.some((r) => r.method === "GET" && r.url === a.url));

      // Calls on B: B restores the session from the shared session store.
      router.target.post = b.url;
      const text = await client.callTool({
        name: "test_simple_text",
        arguments: {},
      }) as { content: { text: string }[] };
      assert.equal(text.content[0].text, "This is a simple text response for testing.");
      await client.subscribeResource({ uri: WATCHED });

      // Changes caused on B reach the GET stream held by A.
      await client.callTool({ name: "test_trigger_tool_change", arguments: {} });
      await until(() => toolChanges.length === 1);
      await client.callTool({ name: "test_trigger_resource_update", arguments: {} });
      await until(() => updates.length === 1);
      assert.deepEqual(updates, [WATCHED]);

      // DELETE on B ends the session on both.
      router.target.delete = b.url;
      await transport.terminateSession();
      assert.equal(transport.sessionId, undefined);
      for (const url of [b.url, a.url]) {
        const gone = await call(url, sessionId, 9, "tools/list");
        assert.equal(gone.status, 404, url);
        await gone.body?.cancel();
      }

      const posts = router.log.filter((r) => r.method === "POST");
      assert.ok(posts.slice(0, 2).every((r) => r.url === a.url)); // initialize, initialized
      assert.ok(posts.slice(2).every((r) => r.url === b.url));
      assert.ok(router.log.filter((r) => r.method === "GET").every((r) => r.url === a.url));
      assert.equal(toolChanges.length, 1);
    } finally {
      await client.close();
    }
  });
});

Deno.test("instances: SIGKILL mid-stream, restart, resume with Last-Event-ID: nothing lost or doubled", async () => {
  await withTwoInstances(async (a, b, kvPath) => {
    // The session starts on A; the client holds A's GET stream.
    const router = new Router(a.url);
    const client = new Client({ name: "killed", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(a.url), {
      fetch: router.fetch,
    });
    await client.connect(transport);
    const sessionId = transport.sessionId!;
    // The SDK's own GET stream is closed; the test reads the stream raw to see the ids.
    await until(() => router.answered.some((r) => r.method === "GET"));
    await client.close();
    const headers = {
      accept: "text/event-stream",
      "mcp-session-id": sessionId,
      "mcp-protocol-version": VERSION,
    };
    const first = new SseReader(await fetch(a.url, { headers }));
    const primed = await first.next();
    assert.equal(primed?.data, "");
    const seen: { id: number; method: unknown }[] = [];
    const record = (event: { id?: string; data?: string }) => {
      assert.ok(event.id && event.data, JSON.stringify(event));
      seen.push({ id: Number(event.id), method: JSON.parse(event.data).method });
    };
    const read = async (reader: SseReader) => record((await reader.next()) ?? {});

    // B produces events; A streams them until it is killed mid-stream.
    let produced = 0;
    const produce = async () => {
      const response = await call(b.url, sessionId, 100 + produced, "tools/call", {
        name: "test_trigger_tool_change",
        arguments: {},
      });
      assert.equal(response.status, 200);
      assert.equal(((await response.json()) as { result?: unknown }).result !== undefined, true);
      produced++;
    };
    // The client reads A's stream until A dies under it.
    const readingA = (async () => {
      try {
        for (let event = await first.next(); event; event = await first.next()) {
          if (event.data) record(event);
        }
      } catch {
        // The connection died with the process.
      }
    })();
    for (let i = 0; i < 3; i++) await produce();
    await until(() => seen.length >= 1);
    const producing = (async () => {
      for (let i = 0; i < 5; i++) await produce();
    })();
    await a.stop("SIGKILL");
    await producing;
    await readingA;
    assert.ok(seen.length >= 1);

    // Restarted on the same file (a new port): resume after the last id seen.
    const restarted = await startInstance(kvPath);
    try {
      for (let i = 0; i < 2; i++) await produce();
      const lastSeen = String(seen.at(-1)!.id);
      const resumed = new SseReader(
        await fetch(restarted.url, { headers: { ...headers, "last-event-id": lastSeen } }),
      );
      assert.deepEqual(await resumed.next(), { id: lastSeen, retry: "3000", data: "" });
      while (seen.length < produced) await read(resumed);
      // The restarted instance restored the session: calls work without a new initialize.
      const listed = await call(restarted.url, sessionId, 1, "tools/list");
      assert.equal(listed.status, 200);
      assert.ok(((await listed.json()) as { result: { tools: unknown[] } }).result.tools.length);
      await produce();
      await read(resumed);
      await resumed.cancel();
    } finally {
      const { code } = await restarted.stop();
      assert.equal(code, 0);
    }
    // Each produced change once, in order. The ids have gaps: every GET records
    // an opening event first, which the stream skips (transport-http).
    assert.equal(seen.length, produced);
    assert.ok(seen.every((e, i) => i === 0 || e.id > seen[i - 1].id), JSON.stringify(seen));
    assert.ok(seen.every((e) => e.method === "notifications/tools/list_changed"));
  });
});

/** `promise`, or a failure once a change has had ample time to cross (not a hang). */
function soon<T>(promise: Promise<T>, limitMs = 10_000): Promise<T> {
  let timer: ReturnType<typeof setTimeout>;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`nothing within ${limitMs} ms`)), limitMs);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** Which flags an instance is started with, for test names. */
const FLAGS: Record<InstanceStores, string> = {
  both: "--event-store kv --session-store kv",
  events: "--event-store kv",
  sessions: "--session-store kv",
};

for (const stores of ["both", "events", "sessions"] as const) {
  Deno.test(`instances (${FLAGS[stores]}): a change raised on B reaches A's listen stream and A's own subscribed session`, async () => {
    await withTwoInstances(async (a, b) => {
      // On A only: a 2026 listen stream, and a legacy session subscribed to the
      // watched resource with its GET stream open. B has never seen either.
      const listen = new SseReader(
        await post(
          a.url,
          request2026("L1", "subscriptions/listen", {
            notifications: { toolsListChanged: true, resourceSubscriptions: [WATCHED] },
          }),
          headers2026("subscriptions/listen"),
        ),
      );
      assert.equal((await listen.message()).method, "notifications/subscriptions/acknowledged");
      const sessionId = await initialize(a.url, VERSION);
      const subscribed = await call(a.url, sessionId, 1, "resources/subscribe", { uri: WATCHED });
      assert.equal(subscribed.status, 200);
      await subscribed.body?.cancel();
      const stream = new SseReader(
        await fetch(a.url, {
          headers: {
            accept: "text/event-stream",
            "mcp-session-id": sessionId,
            "mcp-protocol-version": VERSION,
          },
        }),
      );
      // Resumable (an event store) only: a priming event.
      if (stores !== "sessions") assert.equal((await stream.next())?.data, "");

      // The changes are raised by stateless calls on B.
      for (const name of ["test_trigger_tool_change", "test_trigger_resource_update"]) {
        const response = await post(
          b.url,
          request2026(name, "tools/call", { name, arguments: {} }),
          headers2026("tools/call", name),
        );
        assert.equal(response.status, 200);
        await response.body?.cancel();
      }

      const tag = { "io.modelcontextprotocol/subscriptionId": "L1" };
      assert.deepEqual(await soon(listen.message()), {
        jsonrpc: "2.0",
        method: "notifications/tools/list_changed",
        params: { _meta: tag },
      });
      assert.deepEqual(await soon(listen.message()), {
        jsonrpc: "2.0",
        method: "notifications/resources/updated",
        params: { uri: WATCHED, _meta: tag },
      });
      assert.deepEqual(await soon(stream.message()), {
        jsonrpc: "2.0",
        method: "notifications/tools/list_changed",
      });
      assert.deepEqual(await soon(stream.message()), {
        jsonrpc: "2.0",
        method: "notifications/resources/updated",
        params: { uri: WATCHED },
      });
      await listen.cancel();
      await stream.cancel();
    }, stores);
  });
}

Deno.test("instances: the official v1 client resumes by itself after a SIGKILL, nothing lost or doubled", async () => {
  await withTwoInstances(async (a, b, kvPath) => {
    const router = new Router(a.url);
    const client = new Client({ name: "resuming", version: "1.0.0" });
    let toolChanges = 0;
    const updates: string[] = [];
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      toolChanges++;
    });
    client.setNotificationHandler(
      ResourceUpdatedNotificationSchema,
      (n: { params: { uri: string } }) => {
        updates.push(n.params.uri);
      },
    );
    const transport = new StreamableHTTPClientTransport(new URL(a.url), { fetch: router.fetch });
    let restarted: Instance | undefined;
    try {
      await client.connect(transport);
      await until(() => router.answered.some((r) => r.method === "GET"));
      router.target.post = b.url; // requests go to B, A holds the GET stream
      await client.subscribeResource({ uri: WATCHED });
      const change = () => client.callTool({ name: "test_trigger_tool_change", arguments: {} });
      for (let i = 0; i < 3; i++) await change();
      await until(() => toolChanges === 3);

      await a.stop("SIGKILL");
      for (let i = 0; i < 3; i++) await change(); // produced while no stream is open
      restarted = await startInstance(kvPath);
      router.target.get = restarted.url; // the balancer's new member for streams
      // The client reconnects after the priming event's retry: with Last-Event-ID.
      await until(() => toolChanges === 6);
      await change();
      await client.callTool({ name: "test_trigger_resource_update", arguments: {} });
      await until(() => updates.length === 1);
      assert.equal(toolChanges, 7);
      const gets = router.log.filter((r) => r.method === "GET");
      assert.equal(gets.at(-1)?.url, restarted.url);
      assert.match(gets.at(-1)?.lastEventId ?? "", /^\d+$/);
    } finally {
      await client.close();
      await restarted?.stop();
    }
  });
});

// The answer reaches A on the session bus, which a session store enables.
for (const stores of ["both", "sessions"] as const) {
  Deno.test(`instances (${FLAGS[stores]}): an elicitation asked through A and answered through B completes (official v1 client)`, async () => {
    await withTwoInstances(async (a, b) => {
      const router = new Router(a.url);
      const client = new Client(
        { name: "balanced", version: "1.0.0" },
        { capabilities: { elicitation: {} } },
      );
      client.setRequestHandler(ElicitRequestSchema, (request: { params: { message: string } }) => {
        // The load balancer sends the client's next POST, its answer, to B.
        router.target.post = b.url;
        return answerElicitation(request.params.message);
      });
      const transport = new StreamableHTTPClientTransport(new URL(a.url), { fetch: router.fetch });
      try {
        await client.connect(transport);
        const result = await client.callTool(
          { name: "test_elicitation", arguments: { message: ELICITATION_MESSAGE } },
          undefined,
          { timeout: 10_000 },
        ) as { content: { text: string }[] };
        assert.equal(
          result.content[0].text,
          'User response: action=accept, content={"username":"yes","email":"yes@example.com"}',
        );
        const answer = router.log.findLast((r) => r.method === "POST")!;
        assert.equal(answer.url, b.url);
        assert.ok(router.answered.some((r) => r.url === b.url && r.status === 202));
      } finally {
        await client.close();
      }
    }, stores);
  });
}
