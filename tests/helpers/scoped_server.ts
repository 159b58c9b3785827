/**
 * A server with one tool that needs the `mcp:admin` scope (`purge`) and one
 * that needs none (`whoami`), for the per-tool scope tests.
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
});
