/**
 * A server whose `stubborn` tool reports progress, then ignores its
 * cancellation and never answers: what a client cancelling it must not be
 * left waiting on.
 */
import { defineServer } from "@anubis/core";

export default defineServer({
  name: "stubborn",
  version: "1.0.0",
  tools: [{
    name: "stubborn",
    handler: async (_args, frame) => {
      await frame.progress(1, { total: 2 });
      await new Promise<never>(() => {}); // never settles, whatever the signal says
      return "unreachable";
    },
  }],
});
