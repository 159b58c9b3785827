import assert from "node:assert/strict";
import { CLI_VERSION } from "./_init.ts";
import config from "./deno.json" with { type: "json" };

Deno.test("init asks JSR for this package's own version", () => {
  assert.equal(CLI_VERSION, config.version);
});
