/**
 * The multi round-trip runner of the stateless era: a request that may ask
 * the client for input (`tools/call`, `prompts/get`, `resources/read`) runs
 * with the answers the retry carries; when the handler needs an answer it
 * does not have, it is parked and the request is answered `input_required`
 * with a sealed `requestState` for the next round.
 *
 * @module
 */

import { isThenable } from "../awaitable.ts";
import type { Cancellation } from "../cancellation.ts";
import { NoReply } from "../reply.ts";
import type { InputCollector } from "../frame.ts";
import type { JsonRpcRequest } from "../json_rpc.ts";
import { RequestStateCodec } from "../request_state.ts";
import type { Awaitable } from "../awaitable.ts";
import type { McpServer } from "../server.ts";

/** The digest of a request's arguments (`resources/read` has none but its URI). */
function argumentsDigestOf(request: JsonRpcRequest): Promise<string> | string {
  return request.method === "resources/read"
    ? ""
    : RequestStateCodec.argumentsDigest(request.params!.arguments);
}

/**
 * What earlier rounds left: their answers, their count, the arguments' digest
 * once made; and the caller's principal, which the state is bound to.
 */
interface EarlierRounds {
  readonly answers: Readonly<Record<string, unknown>>;
  readonly round: number;
  readonly digest: string | undefined;
  readonly principal?: string;
}

/** The name (or URI) the state is bound to. */
function targetOf(request: JsonRpcRequest): string {
  const params = request.params!;
  return String(request.method === "resources/read" ? params.uri : params.name);
}

/** A request that may ask the client for input, and what its rounds need. */
export interface InputRound {
  /** The server (its `requestState` seals and opens the state). */
  readonly server: McpServer;
  /** The request. */
  readonly request: JsonRpcRequest;
  /** The collector the frame asks through. */
  readonly inputs: InputCollector;
  /** Aborted when the handler is parked. */
  readonly cancellation: Cancellation;
  /**
   * The caller's principal (`principalOf` its auth info): a state sealed for
   * one principal opens for no other.
   */
  readonly principal: string | undefined;
}

/**
 * Runs a multi round-trip capable request: answers in, `input_required` out.
 * Synchronous when the request carries no state and the work answers at
 * once (a handler that never waited cannot have been parked).
 *
 * @param call The request and what its rounds need.
 * @param run Starts the handler's work once the answers are known.
 * @returns The handler's result, or the `input_required` result.
 */
export function withInputs(
  call: InputRound,
  run: () => Awaitable<Record<string, unknown>>,
): Awaitable<Record<string, unknown>> {
  if (typeof call.request.params!.requestState === "string") return resume(call, run);
  return inputRound(call, run, firstRoundOf(call.principal));
}

/**
 * {@link withInputs} for a request that carries no state, split so the caller
 * starts the work itself (no closure per request): {@link takeAnswers}, then
 * the work; a result there at once is the answer, and pending work comes here.
 *
 * @returns The result, or the `input_required` result once the work is parked.
 */
export function firstRound(
  call: InputRound,
  work: PromiseLike<Record<string, unknown>>,
): Promise<Record<string, unknown>> {
  return settleOrPark(call, work, firstRoundOf(call.principal));
}

/** Gives the collector the answers the request carries, before its work starts. */
export function takeAnswers(request: JsonRpcRequest, inputs: InputCollector): void {
  const answers = request.params!.inputResponses as Record<string, unknown> | undefined;
  if (answers !== undefined) Object.assign(inputs.answers, answers);
}

function firstRoundOf(principal: string | undefined): EarlierRounds {
  return principal === undefined ? FIRST_ROUND : { ...FIRST_ROUND, principal };
}

/** Before the first round: nothing answered yet (shared, never written). */
const FIRST_ROUND: EarlierRounds = Object.freeze({
  answers: Object.freeze({}),
  round: 0,
  digest: undefined,
});

/** Opens the state a retry carries, then runs the round with its answers. */
async function resume(
  call: InputRound,
  run: () => Awaitable<Record<string, unknown>>,
): Promise<Record<string, unknown>> {
  const { server, request, inputs, principal } = call;
  // The state is bound to the arguments too; the digest is made only when a
  // state is opened or sealed, at most once.
  const digest = await argumentsDigestOf(request);
  const state = await server.requestState.open(
    request.params!.requestState as string,
    request.method,
    targetOf(request),
    digest,
    principal,
  );
  Object.assign(inputs.answers, state.answers);
  return await inputRound(call, run, {
    answers: state.answers,
    round: state.round,
    digest,
    principal,
  });
}

/** Runs the handler with this round's answers; a result that is there at once is the answer. */
function inputRound(
  call: InputRound,
  run: () => Awaitable<Record<string, unknown>>,
  earlier: EarlierRounds,
): Awaitable<Record<string, unknown>> {
  takeAnswers(call.request, call.inputs);
  const work = run();
  return isThenable(work) ? settleOrPark(call, work, earlier) : work;
}

/** Waits for the work, or answers `input_required` once it is parked on input. */
async function settleOrPark(
  call: InputRound,
  work: PromiseLike<Record<string, unknown>>,
  earlier: EarlierRounds,
): Promise<Record<string, unknown>> {
  const { server, request, inputs, cancellation } = call;
  // One promise settles from the work, or (a task after the first input
  // request, so inputs asked together are gathered) from the parking.
  const result = await new Promise<Record<string, unknown> | undefined>((resolve, reject) => {
    work.then(resolve, reject);
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
  const answers: Record<string, unknown> = { ...earlier.answers };
  for (const key of inputs.used) answers[key] = inputs.answers[key];
  for (const key of inputs.pending.keys()) delete answers[key];
  return {
    resultType: "input_required",
    inputRequests: Object.fromEntries(inputs.pending),
    requestState: await server.requestState.seal({
      method: request.method,
      target: targetOf(request),
      argumentsDigest: earlier.digest ?? await argumentsDigestOf(request),
      answers,
      round: earlier.round + 1,
      ...(earlier.principal === undefined ? {} : { principal: earlier.principal }),
    }),
  };
}
