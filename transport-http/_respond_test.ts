import assert from "node:assert/strict";
import { respond } from "./_respond.ts";

Deno.test("respond: a failure while answering still answers 500 -32603 with the id", async () => {
  const log = console.error;
  console.error = () => {};
  try {
    // An invalid header name makes building the JSON response throw.
    const response = await respond(
      () => Promise.resolve({ body: { jsonrpc: "2.0", id: 7, result: {} }, status: 200 }),
      { keepAliveMs: 0, cancelOnDisconnect: false, headers: { "bad name": "x" } },
    );
    assert.equal(response.status, 500);
    const body = await response.json();
    assert.equal(body.id, 7);
    assert.equal(body.error.code, -32603);
  } finally {
    console.error = log;
  }
});
