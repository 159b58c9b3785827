/**
 * `completion/complete`: prompt arguments, template variables, then the
 * server's `complete` fallback.
 *
 * @module
 */

import type { Route } from "./method_call.ts";
import type { CompletionRequest } from "../server.ts";

const MAX_VALUES = 100;

/** Serves `completion/complete`. */
export async function complete(route: Route): Promise<Record<string, unknown>> {
  const { server, frame, params } = route;
  const request: CompletionRequest = {
    ref: params.ref as CompletionRequest["ref"],
    argument: params.argument as CompletionRequest["argument"],
    context: ((params.context as { arguments?: Record<string, string> } | undefined)?.arguments) ??
      {},
  };
  const { ref, argument } = request;
  let completer: ((value: string, context: Record<string, string>) => unknown) | undefined;
  if (ref.type === "ref/prompt") {
    completer = server.prompts.get(ref.name)?.arguments?.find((a) => a.name === argument.name)
      ?.complete;
  } else {
    completer = server.resourceTemplates.find((t) => t.definition.uriTemplate === ref.uri)
      ?.definition.complete?.[argument.name];
  }
  let found: unknown;
  if (completer) found = await completer(argument.value, request.context);
  else if (server.definition.complete) found = await server.definition.complete(request, frame);
  else found = [];
  const completion = Array.isArray(found)
    ? { values: found as string[] }
    : found as { values: string[]; total?: number; hasMore?: boolean };
  // The spec caps a completion at 100 values.
  if (completion.values.length > MAX_VALUES) {
    return {
      completion: {
        values: completion.values.slice(0, MAX_VALUES),
        total: completion.total ?? completion.values.length,
        hasMore: true,
      },
    };
  }
  return { completion };
}
