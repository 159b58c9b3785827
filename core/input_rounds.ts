/**
 * The multi round-trip runner of the stateless era: a request that may ask
 * the client for input (`tools/call`, `prompts/get`, `resources/read`) runs
 * with the answers the retry carries; when the handler needs an answer it
 * does not have, it is parked and the request is answered `input_required`
 * with a sealed `requestState` for the next round.
 *
 * @module
 */

import type { Cancellation } from "./cancellation.ts";
import { NoReply } from "./dispatch.ts";
import type { InputCollector } from "./frame.ts";
import type { JsonRpcRequest } from "./json_rpc.ts";
import { RequestStateCodec } from "./request_state.ts";
import type { McpServer } from "./server.ts";

/** The methods whose handlers may ask for input in the stateless era. */
export const MRTR_METHODS: ReadonlySet<string> = new Set([
  "tools/call",
  "prompts/get",
  "resources/read",
]);

/** The digest of a request's arguments (`resources/read` has none but its URI). */
function argumentsDigestOf(request: JsonRpcRequest): Promise<string> | string {
  return request.method === "resources/read"
    ? ""
    : RequestStateCodec.argumentsDigest(request.params!.arguments);
}

/**
 * Runs a multi round-trip capable request: answers in, `input_required` out.
 *
 * @param server The server (its `requestState` seals and opens the state).
 * @param request The request.
 * @param run Starts the handler's work once the answers are known.
 * @param inputs The collector the frame asks through.
 * @param cancellation Aborted when the handler is parked.
 * @returns The handler's result, or the `input_required` result.
 */
export async function withInputs(
  server: McpServer,
  request: JsonRpcRequest,
  run: () => Promise<Record<string, unknown>>,
  inputs: InputCollector,
  cancellation: Cancellation,
): Promise<Record<string, unknown>> {
  const params = request.params!;
  const target = String(request.method === "resources/read" ? params.uri : params.name);
  // The state is bound to the arguments too; the digest is made only when a
  // state is opened or sealed, at most once.
  let digest: string | undefined;
  let round = 0;
  let carried: Record<string, unknown> = {};
  if (typeof params.requestState === "string") {
    const state = await server.requestState.open(
      params.requestState,
      request.method,
      target,
      digest = await argumentsDigestOf(request),
    );
    carried = state.answers;
    Object.assign(inputs.answers, carried);
    round = state.round;
  }
  Object.assign(inputs.answers, params.inputResponses as Record<string, unknown> | undefined);
  // One promise settles from the work, or (a task after the first input
  // request, so inputs asked together are gathered) from the parking.
  const result = await new Promise<Record<string, unknown> | undefined>((resolve, reject) => {
    run().then(resolve, reject);
    inputs.onRequested(() => {
      // Looked at from the first input request on, so a client gone by then
      // is known when the handler is parked (the check below).
      cancellation.watch();
      setTimeout(resolve, 0, undefined);
    });
  });
  if (result !== undefined) return result;
  // Cancelled before it asked: the client wants no answer, not another round.
  if (cancellation.aborted) throw new NoReply();
  cancellation.abort("input required");
  // Earlier rounds' answers plus the ones this round used; unknown extra
  // keys the client sent are not carried on.
  const answers: Record<string, unknown> = { ...carried };
  for (const key of inputs.used) answers[key] = inputs.answers[key];
  for (const key of inputs.pending.keys()) delete answers[key];
  return {
    resultType: "input_required",
    inputRequests: Object.fromEntries(inputs.pending),
    requestState: await server.requestState.seal({
      method: request.method,
      target,
      argumentsDigest: digest ?? await argumentsDigestOf(request),
      answers,
      round: round + 1,
    }),
  };
}
