// An HTTP server on node:http with @hono/node-server whose endpoint needs a
// bearer token, checked by @anubis/transport-http's jwtVerifier (on the `jose`
// the package depends on) against a JWKS URL. Usage:
// `node dist/auth_server.js <issuer> <jwks url>`; prints `{"url": …}` once
// listening, and stops on SIGTERM. Its `whoami` tool answers the caller's
// subject and scopes.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { getRequestListener } from "@hono/node-server";
import { defineServer } from "@anubis/core";
import { createHttpHandler, type HttpHandler, jwtVerifier } from "@anubis/transport-http";

const [issuer, jwksUrl] = process.argv.slice(2);
if (issuer === undefined || jwksUrl === undefined) {
  throw new Error("usage: auth_server.js <issuer> <jwks url>");
}

const server = defineServer({
  name: "node-auth",
  version: "1.0.0",
  tools: [{
    name: "whoami",
    description: "The caller's subject and scopes",
    handler: (_args, frame) => `${frame.auth?.subject} ${frame.auth?.scopes.join(",")}`,
  }],
});

let handler: HttpHandler | undefined;
const http = createServer(getRequestListener((request) => handler!(request)));
http.listen(0, "127.0.0.1", () => {
  const { port } = http.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}/mcp`;
  // The resource (the tokens' audience) is the URL listened on.
  handler = createHttpHandler(server, {
    auth: {
      resource: url,
      verifyToken: jwtVerifier({ issuer, jwksUrl }),
      authorizationServers: [issuer],
    },
  });
  console.log(JSON.stringify({ url }));
});

process.once("SIGTERM", () => {
  handler?.close();
  http.closeAllConnections();
  http.close(() => process.exit(0));
});
