import assert from "node:assert/strict";
import type { Dialect } from "./dialect.ts";
import { Frame, type FrameScope } from "./frame.ts";
import type { ClientCapabilities } from "./types.ts";

/** A frame with the given client capabilities, of a version with the given features. */
function frame(clientCapabilities: ClientCapabilities, features: string[]): Frame {
  const scope = {
    context: { clientCapabilities, signal: new AbortController().signal, meta: {} },
    dialect: { supportsFeature: (f: string) => features.includes(f) } as unknown as Dialect,
  };
  return new Frame(scope as unknown as FrameScope);
}

const BOTH_MODES = ["elicitation", "url_elicitation"];

Deno.test("canElicit: an empty elicitation capability declares form mode only", () => {
  const f = frame({ elicitation: {} }, BOTH_MODES);
  assert.equal(f.canElicit(), true);
  assert.equal(f.canElicit("url"), false);
});

Deno.test("canElicit: declared modes, and only where the version has them", () => {
  assert.equal(frame({ elicitation: { url: {} } }, BOTH_MODES).canElicit("form"), false);
  assert.equal(frame({ elicitation: { url: {} } }, BOTH_MODES).canElicit("url"), true);
  const both = frame({ elicitation: { form: {}, url: {} } }, BOTH_MODES);
  assert.deepEqual([both.canElicit("form"), both.canElicit("url")], [true, true]);
  const formOnlyVersion = frame({ elicitation: { form: {}, url: {} } }, ["elicitation"]);
  assert.equal(formOnlyVersion.canElicit("url"), false);
  assert.equal(frame({ elicitation: {} }, []).canElicit(), false);
  assert.equal(frame({}, BOTH_MODES).canElicit(), false);
});

Deno.test("canSample and canListRoots follow the declared capabilities", () => {
  const declared = frame({ sampling: {}, roots: { listChanged: true } }, []);
  assert.deepEqual([declared.canSample(), declared.canListRoots()], [true, true]);
  const none = frame({}, []);
  assert.deepEqual([none.canSample(), none.canListRoots()], [false, false]);
});
