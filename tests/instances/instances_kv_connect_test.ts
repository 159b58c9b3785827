/**
 * `kv:` with a KV Connect URL (self-hosted denokv, Deno Deploy KV): the URL
 * reaches `Deno.openKv` unchanged, with the access token of
 * `DENO_KV_ACCESS_TOKEN`, and the cli makes no local-file assumption about it
 * (no folder made, no empty-file check). No real denokv here: a loopback
 * server records the KV Connect metadata exchange and refuses it.
 */

import assert from "node:assert/strict";
import { startHttpServer } from "../helpers/everything_http_server.ts";
import { parseArgs } from "../../cli/_args.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

/** A loopback endpoint that records each request and answers 503. */
function recorder() {
  const seen: { method: string; path: string; authorization: string | null }[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => {
    const url = new URL(request.url);
    seen.push({
      method: request.method,
      path: url.pathname + url.search,
      authorization: request.headers.get("authorization"),
    });
    return new Response("no database here", { status: 503 });
  });
  return { seen, url: `http://127.0.0.1:${server.addr.port}`, close: () => server.shutdown() };
}

async function localEntries(): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(ROOT)) names.push(entry.name);
  return names.sort();
}

Deno.test("cli: kv:<KV Connect URL> parses as given for both stores", () => {
  const url = "https://api.deno.com/databases/0e1c7e5a-1b2c/connect";
  const parsed = parseArgs([
    "serve",
    "s.ts",
    "--http",
    "--event-store",
    `kv:${url}`,
    `--session-store=kv:${url}`,
  ]);
  assert.equal(parsed.kind, "serve");
  if (parsed.kind !== "serve") return;
  assert.equal(parsed.options.eventStore, `kv:${url}`);
  assert.equal(parsed.options.sessionStore, `kv:${url}`);
});

Deno.test("cli serve: the KV Connect URL reaches Deno.openKv unchanged, with the token from the environment", async () => {
  const kv = recorder();
  const before = await localEntries();
  try {
    const url = `${kv.url}/databases/abc-123/connect`;
    await assert.rejects(
      startHttpServer(["--event-store", `kv:${url}`, "--session-store", `kv:${url}`], {
        DENO_KV_ACCESS_TOKEN: "token-for-the-test",
      }),
      (error: Error) => {
        assert.match(error.message, /anubis: cannot open the KV store/);
        assert.doesNotMatch(error.message, /is empty/);
        return true;
      },
    );
    assert.ok(kv.seen.length >= 1);
    // Opened once for both stores (one handle per path), as given.
    assert.deepEqual(kv.seen[0], {
      method: "POST",
      path: "/databases/abc-123/connect",
      authorization: "Bearer token-for-the-test",
    });
    assert.deepEqual(await localEntries(), before, "no folder made for a URL");
  } finally {
    await kv.close();
  }
});

Deno.test("cli serve: a KV Connect URL without DENO_KV_ACCESS_TOKEN is refused, saying so", async () => {
  const kv = recorder();
  try {
    await assert.rejects(
      startHttpServer(["--session-store", `kv:${kv.url}/db`], { DENO_KV_ACCESS_TOKEN: "" }),
      /cannot open the KV store: .*DENO_KV_ACCESS_TOKEN/,
    );
    assert.equal(kv.seen.length, 0);
  } finally {
    await kv.close();
  }
});
