/**
 * `tools/list` and `tools/call`: the tool surface a frame may see, argument
 * validation, and result normalization.
 *
 * @module
 */

import { ErrorCode, McpError } from "../errors.ts";
import type { Frame } from "../frame.ts";
import { holdsScopes, InsufficientScopeError } from "../reply.ts";
import { andThen, isThenable } from "../awaitable.ts";
import { paginate } from "./pagination.ts";
import type { Route } from "./method_call.ts";
import { compile, type CompiledTool } from "./tool_schemas.ts";
import type { Validation } from "../json_schema.ts";
import type { Awaitable } from "../awaitable.ts";
import type { McpServer, ToolDefinition } from "../server.ts";
import type { CallToolResult } from "../types.ts";

/**
 * The tools a frame may list and call: `serverTools` applied to the static
 * tools when defined, the static tools otherwise.
 */
export function visibleTools(
  server: McpServer,
  frame: Frame,
):
  | ReadonlyMap<string, ToolDefinition<never>>
  | Promise<ReadonlyMap<string, ToolDefinition<never>>> {
  const filter = server.definition.serverTools;
  const all = scoped(server) ? byScope(server.tools, frame) : server.tools;
  // Without a filter the answer is synchronous: tools/call awaits nothing for it.
  if (!filter) return all;
  return Promise.resolve(filter([...all.values()], frame)).then((tools) =>
    new Map(tools.map((t) => [t.name, t]))
  );
}

// A cache of a fact of the definition, not state: a server's static tools are
// fixed by `defineServer` (`McpServer.tools` is a read-only map), so the
// answer never changes for a server object.
const scopedCache = new WeakMap<McpServer, boolean>();

/** Whether any static tool of a server requires scopes (asked once per server). */
function scoped(server: McpServer): boolean {
  let answer = scopedCache.get(server);
  if (answer === undefined) {
    answer = [...server.tools.values()].some((t) => (t.requiredScopes?.length ?? 0) > 0);
    scopedCache.set(server, answer);
  }
  return answer;
}

/**
 * The error for a tool the caller cannot call: 403 `insufficient_scope`
 * (step-up) for a static tool whose scopes the caller lacks, `Unknown tool`
 * otherwise. Asked only on a miss, so a found tool costs nothing here.
 */
export function unknownTool(server: McpServer, frame: Frame, name: string): McpError {
  const needed = server.tools.get(name)?.requiredScopes;
  if (needed && needed.length > 0 && !holdsScopes(frame, needed)) {
    return new InsufficientScopeError("tool", name, needed);
  }
  return new McpError(ErrorCode.INVALID_PARAMS, `Unknown tool: ${name}`, { name });
}

/** The tools whose required scopes the frame's caller holds. */
function byScope(
  tools: ReadonlyMap<string, ToolDefinition<never>>,
  frame: Frame,
): ReadonlyMap<string, ToolDefinition<never>> {
  const granted = (frame.context.authInfo as { scopes?: unknown } | undefined)?.scopes;
  const has = Array.isArray(granted) ? new Set(granted) : new Set();
  const visible = new Map<string, ToolDefinition<never>>();
  for (const [name, tool] of tools) {
    if (!tool.requiredScopes || tool.requiredScopes.every((scope) => has.has(scope))) {
      visible.set(name, tool);
    }
  }
  return visible;
}

/** Serves `tools/list`. */
export async function listTools(route: Route): Promise<Record<string, unknown>> {
  const tools = await visibleTools(route.server, route.frame);
  const page = paginate(
    [...tools.values()],
    route.params.cursor as string | undefined,
    route.server.definition.pageSize,
  );
  const wires = page.items.map((t) => compile(t).wire);
  const result: Record<string, unknown> = {
    tools: wires.some((w) => w instanceof Promise) ? await Promise.all(wires) : wires,
  };
  if (page.nextCursor) result.nextCursor = page.nextCursor;
  return result;
}

/**
 * Serves `tools/call`. Synchronous while nothing it calls is asynchronous
 * (the tool list, the argument validator, the handler), so a tool that
 * answers at once costs no promise here.
 */
export function callTool(route: Route): Awaitable<Record<string, unknown>> {
  const tools = visibleTools(route.server, route.frame);
  // No closure per call while the tool list is there at once (no `serverTools`).
  return isThenable(tools)
    ? Promise.resolve(tools).then((visible) => callVisible(route, visible))
    : callVisible(route, tools);
}

/** {@link callTool} once the tools the caller sees are known. */
function callVisible(
  route: Route,
  tools: ReadonlyMap<string, ToolDefinition<never>>,
): Awaitable<Record<string, unknown>> {
  const name = route.params.name as string;
  const tool = tools.get(name);
  if (!tool) throw unknownTool(route.server, route.frame, name);
  // Looked up once for the input and the output checks.
  const compiled = compile(tool);
  const input = compiled.validateInput(route.params.arguments ?? {});
  return isThenable(input)
    ? Promise.resolve(input).then((checked) => runTool(route, tool, compiled, checked))
    : runTool(route, tool, compiled, input);
}

function runTool(
  route: Route,
  tool: ToolDefinition<never>,
  compiled: CompiledTool,
  input: Validation,
): Awaitable<Record<string, unknown>> {
  const { server, frame, dialect } = route;
  const name = tool.name;
  if (!input.ok) {
    const message = `Invalid arguments for tool ${name}: ${input.message}`;
    if (dialect.supportsFeature("tool_input_errors_as_results")) {
      return { content: [{ type: "text", text: message }], isError: true };
    }
    throw new McpError(ErrorCode.INVALID_PARAMS, message);
  }
  // Whatever fails while the handler runs or its result is read (a throw, a
  // rejection, a result that cannot be normalized) is the tool's failure.
  let result: CallToolResult | Promise<CallToolResult>;
  try {
    // A task-capable tool runs as a task where the call can become one (else at once);
    // any other is called directly, with no closure made per call.
    const support = tool.execution?.taskSupport;
    const returned = support && support !== "forbidden" && tool.taskStart !== "handler"
      ? frame.runAsTask((frame) => callHandler(server, tool, input.value, frame))
      : callHandler(server, tool, input.value, frame);
    result = andThen(returned, normalizeToolResult);
  } catch (error) {
    return toolFailure(error);
  }
  return result instanceof Promise
    ? result.then((value) => checkOutput(tool, compiled, value), toolFailure)
    : checkOutput(tool, compiled, result);
}

/** Runs a tool's handler, or the server's `handleToolCall` for a tool without one. */
function callHandler(
  server: McpServer,
  tool: ToolDefinition<never>,
  args: unknown,
  frame: Frame,
): Awaitable<CallToolResult | string> {
  return tool.handler
    ? tool.handler(args as never, frame)
    : server.definition.handleToolCall!(tool.name, args as Record<string, unknown>, frame);
}

/** A handler's failure as a tool error result; an `McpError` stays a JSON-RPC error. */
function toolFailure(error: unknown): CallToolResult {
  if (error instanceof McpError) throw error;
  const text = error instanceof Error ? error.message : String(error);
  return { content: [{ type: "text", text: text || "Tool failed" }], isError: true };
}

/** Checks a tool's result against its `outputSchema`, when it declares one. */
function checkOutput(
  tool: ToolDefinition<never>,
  { validateOutput }: CompiledTool,
  result: CallToolResult,
): Awaitable<Record<string, unknown>> {
  if (!validateOutput || result.isError) return result;
  const name = tool.name;
  if (result.structuredContent === undefined) {
    throw new McpError(
      ErrorCode.INTERNAL_ERROR,
      `Tool ${name} declares an outputSchema but returned no structuredContent`,
    );
  }
  return andThen(validateOutput(result.structuredContent), (output) => {
    if (!output.ok) {
      throw new McpError(
        ErrorCode.INTERNAL_ERROR,
        `Tool ${name} returned structuredContent that does not match its outputSchema: ${output.message}`,
      );
    }
    return result;
  });
}

function normalizeToolResult(returned: CallToolResult | string): CallToolResult {
  if (typeof returned === "string") return { content: [{ type: "text", text: returned }] };
  if (typeof returned !== "object" || returned === null) {
    throw new McpError(ErrorCode.INTERNAL_ERROR, "Tool returned neither a result nor a string");
  }
  if (!Array.isArray(returned.content)) {
    // Structured output alone: the spec asks for its JSON in a text block too.
    if (returned.structuredContent !== undefined) {
      return {
        ...returned,
        content: [{ type: "text", text: JSON.stringify(returned.structuredContent) }],
      };
    }
    throw new McpError(ErrorCode.INTERNAL_ERROR, "Tool result has no content array");
  }
  return returned;
}
