import assert from "node:assert/strict";
import { isLoopbackHost, OriginGuard } from "./origin.ts";

const request = (headers: Record<string, string>) =>
  new Request("http://127.0.0.1:8080/mcp", { headers });

Deno.test("origin: loopback names", () => {
  for (
    const name of ["localhost", "LOCALHOST", "app.localhost", "127.0.0.1", "127.1.2.3", "[::1]"]
  ) {
    assert.equal(isLoopbackHost(name), true, name);
  }
  for (const name of ["evil.example.com", "localhost.evil.com", "128.0.0.1", "0.0.0.0"]) {
    assert.equal(isLoopbackHost(name), false, name);
  }
});

Deno.test("origin: the default guard accepts loopback Host and Origin and no Origin", () => {
  const guard = new OriginGuard({});
  assert.equal(guard.check(request({ host: "127.0.0.1:8080" })), undefined);
  assert.equal(
    guard.check(request({ host: "localhost", origin: "http://localhost:3000" })),
    undefined,
  );
  assert.equal(guard.check(request({ host: "[::1]:80", origin: "https://[::1]" })), undefined);
  assert.equal(guard.check(request({ host: "evil.example.com" }))?.status, 421);
  assert.equal(guard.check(request({ host: "127.0.0.1", origin: "null" }))?.status, 403);
  assert.equal(
    guard.check(request({ host: "127.0.0.1", origin: "http://localhost.evil.com" }))?.status,
    403,
  );
});

Deno.test("origin: allow-lists and wildcards", () => {
  const listed = new OriginGuard({
    allowedOrigins: ["https://App.example.com/"],
    allowedHosts: ["mcp.example.com", "other.example.com:8443"],
  });
  assert.equal(
    listed.check(request({ host: "mcp.example.com:443", origin: "https://app.example.com" })),
    undefined,
  );
  assert.equal(listed.check(request({ host: "other.example.com:8443" })), undefined);
  assert.equal(listed.check(request({ host: "other.example.com:9000" }))?.status, 421);
  const open = new OriginGuard({ allowedOrigins: "*", allowedHosts: "*" });
  assert.equal(open.check(request({ host: "x.example", origin: "https://y.example" })), undefined);
});

Deno.test("origin: a repeated Host keeps its own verdict between others", () => {
  const guard = new OriginGuard({ allowedHosts: ["mcp.example.com"] });
  for (
    const [host, status] of [
      ["mcp.example.com", undefined],
      ["mcp.example.com", undefined],
      ["evil.example.com", 421],
      ["evil.example.com", 421],
      ["mcp.example.com", undefined],
      ["127.0.0.1:80", undefined],
      ["evil.example.com", 421],
    ] as const
  ) {
    assert.equal(guard.check(request({ host }))?.status, status, host);
  }
});
