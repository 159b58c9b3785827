// A stdio server as a Node user writes it: @anubis/transport-stdio serving on
// process.stdin and process.stdout. Run as `node dist/stdio_server.js`.
import { defineServer } from "@anubis/core";
import { serveStdio } from "@anubis/transport-stdio";

const server = defineServer({
  name: "node-stdio",
  version: "1.0.0",
  tools: [{
    name: "add",
    description: "Adds two numbers",
    inputSchema: {
      type: "object",
      properties: { a: { type: "number" }, b: { type: "number" } },
      required: ["a", "b"],
    },
    handler: ({ a, b }) => `${a + b} (on Node ${process.version})`,
  }],
});

await serveStdio(server);
