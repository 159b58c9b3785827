import assert from "node:assert/strict";
import { Cancellation } from "./cancellation.ts";

Deno.test("Cancellation: the lazy transport signal is asked for only when the signal is read", () => {
  let asked = 0;
  const transport = new AbortController();
  const cancellation = new Cancellation({ lazy: () => (asked++, transport.signal) });
  assert.equal(cancellation.aborted, false);
  assert.equal(asked, 0);
  const signal = cancellation.signal;
  assert.equal(asked, 1);
  assert.equal(cancellation.signal, signal);
  transport.abort();
  assert.equal(signal.aborted, true);
  assert.equal(cancellation.aborted, true);
  cancellation.dispose();
});

Deno.test("Cancellation: aborts before the signal exists reach it when it is made", () => {
  const engine = new Cancellation();
  engine.abort("input required");
  assert.equal(engine.aborted, true);
  assert.equal(engine.signal.reason, "input required");

  const linked = new AbortController();
  linked.abort();
  const early = new Cancellation({ linked: linked.signal });
  assert.equal(early.aborted, true);
  assert.equal(early.signal.aborted, true);
});

Deno.test("Cancellation: cancel reasons are kept only when asked", () => {
  const kept = new Cancellation({ keepReasons: true });
  const signal = kept.signal;
  kept.cancel("user stopped");
  assert.equal(signal.reason, "user stopped");
  const plain = new Cancellation();
  plain.cancel("user stopped");
  assert.equal(plain.signal.reason instanceof DOMException, true);
});

Deno.test("Cancellation: dispose unlinks the transport's signal", () => {
  const transport = new AbortController();
  const cancellation = new Cancellation({ linked: transport.signal });
  const signal = cancellation.signal;
  cancellation.dispose();
  transport.abort();
  assert.equal(signal.aborted, false);
});
