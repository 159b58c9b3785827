/**
 * The hello example in process with the test client of
 * `@anubis/testing`: no transport, both protocol eras.
 */

import assert from "node:assert/strict";
import { connect } from "@anubis/testing";
import hello from "./hello.ts";

for (const version of ["2025-11-25", "2026-07-28"]) {
  Deno.test(`hello (${version}): echo, ask_name, count, the template and the prompt`, async () => {
    const progress: unknown[] = [];
    const client = await connect(hello, {
      version,
      elicit: () => ({ action: "accept", content: { name: "Ada" } }),
      onProgress: (params) => progress.push(params.progress),
    });
    try {
      assert.equal((await client.callTool("echo", { text: "hi" })).content[0].text, "echo: hi");
      assert.equal((await client.callTool("echo", {})).isError, true);
      assert.equal((await client.callTool("ask_name")).content[0].text, "Hello, Ada!");
      assert.equal((await client.callTool("count")).content[0].text, "counted");
      assert.deepEqual(progress, [1, 2, 3]);
      assert.equal((await client.readResource("test://items/7")).contents[0].text, "item 7");
      const prompt = await client.getPrompt("greet", { who: "Bo" });
      assert.deepEqual(prompt.messages[0].content, { type: "text", text: "Greet Bo" });
      await assert.rejects(client.getPrompt("greet"), { code: -32602 });
    } finally {
      client.close();
    }
  });
}
