/**
 * `cli serve --http --auth-issuer --auth-jwks` against a real OAuth
 * authorization server on loopback (`oauth2-mock-server`), reached by the
 * official SDK v1 client's OAuth flow: a 401 sends it to the
 * protected-resource metadata, from there to the authorization server's
 * metadata, it gets a token (client credentials, RFC 8707 `resource`) and
 * calls a tool. A token for another audience is refused.
 */

import assert from "node:assert/strict";
import { OAuth2Server } from "oauth2-mock-server";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ClientCredentialsProvider } from "@modelcontextprotocol/sdk/client/auth-extensions.js";
import { startCli } from "../helpers/everything_http_server.ts";

Deno.test("auth cli: the SDK v1 client's OAuth flow gets a token from a real AS and calls a tool", async () => {
  const as = new OAuth2Server();
  await as.issuer.keys.generate("RS256");
  await as.start(0, "127.0.0.1");
  const issuer = as.issuer.url!;
  // The token's audience is the resource the client asked for (RFC 8707).
  as.service.on("beforeTokenSigning", (token: { payload: Record<string, unknown> }, req: {
    body?: Record<string, string>;
  }) => {
    if (req.body?.resource) token.payload.aud = req.body.resource;
    token.payload.scope = req.body?.scope ?? "mcp";
    // RFC 9068 access tokens name their client; the mock server's client-credentials
    // tokens name no one, and a token naming neither subject nor client is refused.
    token.payload.client_id = "test-client";
  });
  const child = await startCli("examples/hello.ts", [
    "--port",
    "0",
    "--auth-issuer",
    issuer,
    "--auth-jwks",
    `${issuer}/jwks`,
  ]);
  const server = { ...child, url: child.firstLine.replace("anubis: listening on ", "") };
  let stderr = "";
  try {
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/, server.firstLine);
    const metadata =
      await (await fetch(new URL("/.well-known/oauth-protected-resource/mcp", server.url))).json();
    assert.deepEqual(metadata, {
      resource: server.url,
      authorization_servers: [issuer],
      bearer_methods_supported: ["header"],
    });
    const bare = await fetch(server.url, { method: "POST" });
    await bare.body?.cancel();
    assert.equal(bare.status, 401);

    const client = new Client({ name: "oauth-client", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(server.url), {
      authProvider: new ClientCredentialsProvider({
        clientId: "test-client",
        clientSecret: "test-secret",
        expectedIssuer: issuer,
      }),
    });
    await client.connect(transport);
    const result = await client.callTool({ name: "echo", arguments: { text: "authorized" } });
    assert.deepEqual(result.content, [{ type: "text", text: "echo: authorized" }]);
    await client.close();

    // A token minted for another resource is refused.
    const foreign = await as.issuer.buildToken({
      scopesOrTransform: (_header: unknown, payload: Record<string, unknown>) => {
        payload.aud = "http://127.0.0.1:1/other";
      },
    });
    const refused = await fetch(server.url, {
      method: "POST",
      headers: { authorization: `Bearer ${foreign}`, "content-type": "application/json" },
      body: "{}",
    });
    await refused.body?.cancel();
    assert.equal(refused.status, 401);
    assert.match(refused.headers.get("www-authenticate")!, /error="invalid_token"/);
  } finally {
    stderr = (await server.stop()).stderr;
    await as.stop();
  }
  assert.ok(!/eyJ[A-Za-z0-9_-]{10,}/.test(stderr), "no token in the server's log");
});
