/**
 * A server module for the stdio edge-case tests: it prints to the console at
 * top level and in a handler, returns results JSON cannot encode, asks the
 * client for input that never comes, runs slow tools, and answers texts of
 * any length.
 *
 * @module
 */

import { defineServer } from "@anubis/core";

const circular: Record<string, unknown> = {};
circular.self = circular;

// A module that prints while it loads must not corrupt the protocol stream.
console.log("top-level log");
console.info("top-level info");

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Every console method that Deno writes to stdout, called once. */
function printEverywhere(): void {
  console.log("log");
  console.info("info");
  console.debug("debug");
  console.dir({ dir: 1 });
  console.dirxml({ dirxml: 1 });
  console.table([{ table: 1 }]);
  console.count("count");
  console.countReset("count");
  console.group("group");
  console.groupCollapsed("groupCollapsed");
  console.groupEnd();
  console.groupEnd();
  console.time("time");
  console.timeLog("time", "timeLog");
  console.timeEnd("time");
  console.clear();
  console.trace("trace");
  console.assert(false, "assert");
}

export default defineServer({
  name: "edges",
  version: "1.0.0",
  clientRequestTimeoutMs: 300,
  tools: [
    {
      name: "noisy",
      description: "Prints with every console method, then answers",
      handler: () => {
        printEverywhere();
        return "printed";
      },
    },
    {
      name: "bigint",
      description: "Returns a BigInt in _meta, which JSON cannot encode",
      handler: () => ({ content: [{ type: "text", text: "x" }], _meta: { n: 10n } }) as never,
    },
    {
      name: "circular",
      description: "Returns a circular _meta, which JSON cannot encode",
      handler: () => ({ content: [{ type: "text", text: "x" }], _meta: circular }) as never,
    },
    {
      name: "log_bigint",
      description: "Logs a BigInt (the notification cannot be encoded), then answers",
      handler: async (_args, frame) => {
        await frame.log("info", { n: 1n });
        return "logged";
      },
    },
    {
      name: "sample",
      description: "Asks the client to sample; reports how the wait ended",
      handler: async (_args, frame) => {
        try {
          await frame.sample({
            messages: [{ role: "user", content: { type: "text", text: "q" } }],
            maxTokens: 5,
          });
          return "answered";
        } catch (error) {
          return `caught: ${(error as Error).message}`;
        }
      },
    },
    {
      name: "elicit",
      description: "Asks the client for a name",
      handler: async (_args, frame) => {
        const answer = await frame.elicit({
          message: "name?",
          requestedSchema: { type: "object", properties: { name: { type: "string" } } },
        });
        return answer.action;
      },
    },
    {
      name: "slow",
      description: "Reports progress 0 (a sign it runs), then answers after 500 ms",
      handler: async (_args, frame) => {
        await frame.progress(0);
        await sleep(500);
        return "slow done";
      },
    },
    {
      name: "repeat",
      description: "Answers its text repeated the given number of times",
      inputSchema: {
        type: "object",
        properties: { text: { type: "string" }, times: { type: "integer" } },
        required: ["text", "times"],
      },
      handler: ({ text, times }: { text: string; times: number }) => text.repeat(times),
    },
  ],
});
