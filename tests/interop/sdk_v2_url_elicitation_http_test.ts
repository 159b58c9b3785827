/**
 * URL-mode elicitation (2025-11-25) over Streamable HTTP between `cli serve
 * tests/helpers/url_elicitation_server.ts --http` (a real child process on a
 * free port) and the official v2 client 2.4.0: the client gets the `-32042`
 * error as its `UrlElicitationRequiredError` with the elicitations, then
 * `notifications/elicitation/complete` for that id on the session's stream,
 * sent after the refused request ended; the retry succeeds.
 */

import assert from "node:assert/strict";
import {
  Client,
  StreamableHTTPClientTransport,
  UrlElicitationRequiredError,
} from "@modelcontextprotocol/client";
import { startCli } from "../helpers/everything_http_server.ts";

Deno.test("URL elicitation over HTTP: -32042 with its elicitations, then elicitation/complete (SDK v2, 2025-11-25)", async () => {
  const server = await startCli("tests/helpers/url_elicitation_server.ts", ["--port", "0"]);
  const client = new Client({ name: "url-host", version: "1.0.0" }, {
    capabilities: { elicitation: { url: {} } },
    versionNegotiation: { mode: "legacy" },
  });
  const completed: string[] = [];
  let heard!: () => void;
  const completion = new Promise<void>((resolve) => heard = resolve);
  client.setNotificationHandler("notifications/elicitation/complete", (notification) => {
    completed.push(notification.params.elicitationId);
    heard();
  });
  try {
    await client.connect(new StreamableHTTPClientTransport(server.url));
    assert.equal(client.getNegotiatedProtocolVersion(), "2025-11-25");
    const refused = await client.callTool({ name: "connect", arguments: {} }).then(
      () => undefined,
      (error) => error,
    );
    assert.ok(refused instanceof UrlElicitationRequiredError, String(refused));
    assert.equal(refused.code, -32042);
    assert.equal(refused.message.includes("Sign-in required"), true, refused.message);
    assert.equal(refused.elicitations.length, 1);
    const [elicitation] = refused.elicitations;
    assert.equal(elicitation.mode, "url");
    assert.equal(elicitation.message, "Sign in to the example service");
    assert.equal(
      elicitation.url,
      `https://auth.example.com/sign-in?state=${elicitation.elicitationId}`,
    );
    const done = await client.callTool({
      name: "finish_sign_in",
      arguments: { elicitationId: elicitation.elicitationId },
    });
    assert.deepEqual(done.content, [{ type: "text", text: "completed" }]);
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      completion,
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error("no elicitation/complete within 10 s")), 10_000);
      }),
    ]).finally(() => clearTimeout(timer));
    assert.deepEqual(completed, [elicitation.elicitationId]);
    const retried = await client.callTool({ name: "connect", arguments: {} });
    assert.deepEqual(retried.content, [{ type: "text", text: "connected" }]);
  } finally {
    await client.close();
    await server.stop();
  }
});
