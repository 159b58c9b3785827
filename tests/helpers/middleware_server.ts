/**
 * A server with the four kinds of middleware, for the tests over real
 * transports: `log` counts the calls it saw (the `calls_seen` tool reads the
 * count), `reject` refuses `echo` of the text "forbidden", `rewrite` turns a
 * non-string `text` into a string (or "default" when missing) before the
 * tool's schema check, and `wrap` marks every tool result in its `_meta`.
 */

import { defineServer, ErrorCode, forMethod, McpError, type Middleware } from "@anubis/core";

const seen = new Map<string, number>();

const log: Middleware = async (call, next) => {
  seen.set(call.method, (seen.get(call.method) ?? 0) + 1);
  return await next();
};

const reject = forMethod("tools/call", (call, next) => {
  if (call.params.arguments?.text === "forbidden") {
    throw new McpError(ErrorCode.INVALID_PARAMS, "forbidden text");
  }
  return next();
});

const rewrite = forMethod("tools/call", (call, next) => {
  if (call.params.name !== "echo") return next();
  const args = call.params.arguments ?? {};
  if (typeof args.text === "string") return next();
  const text = args.text === undefined ? "default" : String(args.text);
  return next({ params: { ...call.params, arguments: { ...args, text } } });
});

const wrap: Middleware = async (call, next) => {
  const result = await next();
  if (call.method !== "tools/call" || !result) return result;
  return { ...result, _meta: { ...(result._meta as object | undefined), wrapped: true } };
};

export default defineServer({
  name: "middleware",
  version: "1.0.0",
  middleware: [log, reject, rewrite, wrap],
  tools: [
    {
      name: "echo",
      inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
      handler: ({ text }) => `echo ${text}`,
    },
    {
      name: "calls_seen",
      handler: () => String(seen.get("tools/call") ?? 0),
    },
  ],
});
