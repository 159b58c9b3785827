/**
 * A small example server (also driven by the end-to-end tests): one tool that echoes, one that
 * asks the user a question, one that reports progress, a resource, a
 * template and a prompt.
 *
 * @module
 */

import { defineServer } from "@anubis/core";

export default defineServer({
  name: "hello",
  version: "1.0.0",
  instructions: "Say hello.",
  tools: [
    {
      name: "echo",
      description: "Echoes its text",
      inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
      handler: ({ text }) => `echo: ${text}`,
    },
    {
      name: "ask_name",
      description: "Asks the user for a name",
      handler: async (_args, frame) => {
        const answer = await frame.elicit({
          message: "What is your name?",
          requestedSchema: {
            type: "object",
            properties: { name: { type: "string" } },
            required: ["name"],
          },
        }, { key: "user_name" });
        return `Hello, ${answer.content?.name}!`;
      },
    },
    {
      name: "count",
      description: "Counts to three with progress",
      handler: async (_args, frame) => {
        for (let i = 1; i <= 3; i++) {
          await frame.progress(i, { total: 3 });
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        return "counted";
      },
    },
  ],
  resources: [{ uri: "test://hello", name: "hello", mimeType: "text/plain", read: () => "hi" }],
  resourceTemplates: [{
    uriTemplate: "test://items/{id}",
    name: "item",
    read: (_uri, { id }) => `item ${id}`,
  }],
  prompts: [{
    name: "greet",
    description: "Greets someone",
    arguments: [{ name: "who", required: true }],
    handler: ({ who }) => [{ role: "user", content: { type: "text", text: `Greet ${who}` } }],
  }],
});
