import assert from "node:assert/strict";
import { Cancellation } from "../cancellation.ts";
import type { JsonRpcMessage } from "../json_rpc.ts";
import { Session } from "./session.ts";

Deno.test("Session: the subscription set is made only when a URI is added", () => {
  const session = new Session({ transport: "stdio" });
  assert.equal(session.isSubscribed("file:///a"), false);
  assert.deepEqual(session.subscribedUris(), []);
  session.subscribe("file:///a");
  assert.equal(session.isSubscribed("file:///a"), true);
  assert.deepEqual(session.subscribedUris(), ["file:///a"]);
});

Deno.test("Session: cancel and close reach tracked requests, with their reasons", () => {
  const session = new Session({ transport: "stdio" });
  const legacy = session.track(1);
  const stateless = session.track(2, new Cancellation());
  assert.equal(session.inflightCount, 2);
  session.cancel(1, "user stopped");
  assert.equal(legacy.signal.reason, "user stopped");
  session.close();
  assert.equal(stateless.aborted, true);
  assert.equal(stateless.signal.reason instanceof DOMException, true);
  session.untrack(1, legacy);
  assert.equal(session.inflightCount, 0);
});

Deno.test("Session: server-to-client request ids differ between two instances of one session", async () => {
  const ids = async (session: Session, count: number) => {
    const sent: unknown[] = [];
    const emit = (message: JsonRpcMessage) => {
      if ("id" in message) sent.push(message.id);
      return Promise.resolve();
    };
    const controller = new AbortController();
    for (let i = 0; i < count; i++) {
      session.request("roots/list", {}, emit, controller.signal, 60_000).catch(() => {});
    }
    controller.abort();
    await Promise.resolve();
    return sent;
  };
  // Two processes (or engines) serving one HTTP session each start counting afresh.
  const a = await ids(new Session({ id: "s-1", transport: "http" }), 3);
  const b = await ids(new Session({ id: "s-1", transport: "http" }), 3);
  assert.equal(new Set([...a, ...b]).size, 6);
  for (const id of [...a, ...b]) assert.match(String(id), /^anubis-[0-9a-f]{16}-[1-3]$/);
  assert.equal(String(a[0]).slice(0, -1), String(a[2]).slice(0, -1), "one prefix per session");
});

Deno.test("Session: the assigns holder is made on first read and then kept", () => {
  const session = new Session({ transport: "stdio" });
  const holder = session.assigns;
  assert.equal(session.assigns, holder);
  holder.value.userId = 7;
  session.assigns.value = { ...session.assigns.value, role: "admin" };
  assert.deepEqual(session.assigns.value, { userId: 7, role: "admin" });
});

Deno.test("Session: requests in flight are tracked, cancelled and untracked one or many at a time", () => {
  const session = new Session({ transport: "stdio" });
  const a = session.track(1);
  const b = session.track("b");
  const c = session.track(3);
  assert.equal(session.inflightCount, 3);
  session.untrack(1, a);
  assert.equal(session.inflightCount, 2);
  const again = session.track(1); // the id is free again
  session.cancel("b");
  assert.equal(b.aborted, true);
  assert.equal(again.aborted, false);
  session.untrack("b", b);
  session.untrack(3, session.track(3)); // the later tracking of 3 replaced the earlier one
  assert.equal(c.aborted, false);
  assert.equal(session.inflightCount, 1);
  session.untrack(1, a); // an earlier tracking of the id: ignored
  assert.equal(session.inflightCount, 1);
  session.cancel(1, "stop");
  assert.equal(again.aborted, true);
  session.untrack(1, again);
  assert.equal(session.inflightCount, 0);
  const last = session.track(4);
  session.close();
  assert.equal(last.signal.reason, "session closed");
  assert.equal(session.inflightCount, 0);
});
