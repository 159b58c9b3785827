/**
 * A server with a tool, a resource and a prompt that need the `mcp:admin`
 * scope (`purge`, `secret://plans`, `confess`) and a tool that needs none
 * (`whoami`), for the scope tests.
 */

import { defineServer } from "@anubis/core";

export default defineServer({
  name: "scoped",
  version: "1.0.0",
  tools: [
    {
      name: "purge",
      description: "Needs the mcp:admin scope",
      requiredScopes: ["mcp:admin"],
      handler: () => "purged",
    },
    {
      name: "whoami",
      description: "Needs no scope",
      handler: () => "someone",
    },
  ],
  resources: [
    { uri: "public://news", name: "news", read: () => "all quiet" },
    {
      uri: "secret://plans",
      name: "plans",
      requiredScopes: ["mcp:admin"],
      read: () => "the plans",
    },
  ],
  prompts: [
    {
      name: "confess",
      requiredScopes: ["mcp:admin"],
      handler: () => [{ role: "user", content: { type: "text", text: "confess" } }],
    },
  ],
});
