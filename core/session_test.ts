import assert from "node:assert/strict";
import { Cancellation } from "./cancellation.ts";
import { Session } from "./session.ts";

Deno.test("Session: the subscription set is made only when a URI is added", () => {
  const session = new Session({ transport: "stdio" });
  assert.equal(session.isSubscribed("file:///a"), false);
  assert.deepEqual(session.subscribedUris(), []);
  session.subscriptions.add("file:///a");
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
