/** A server whose valibot tool has a schema `@valibot/to-json-schema` cannot convert (a date). */
import { defineServer } from "@anubis/core";
import * as v from "valibot";

export default defineServer({
  name: "unlistable",
  version: "1.0.0",
  tools: [{
    name: "when",
    inputSchema: v.object({ at: v.date() }),
    handler: ({ at }) => at.toISOString(),
  }],
});
