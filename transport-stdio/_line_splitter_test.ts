import assert from "node:assert/strict";
import { type Line, LineSplitter } from "./_line_splitter.ts";

const bytes = (s: string) => new TextEncoder().encode(s);
const show = (lines: Line[]) =>
  lines.map((l) => ("bytes" in l ? { bytes: new TextDecoder().decode(l.bytes) } : l));

Deno.test("pushText: a chunk of whole lines decodes once into text lines", () => {
  const splitter = new LineSplitter(1024);
  assert.deepEqual(splitter.pushText(bytes('{"a":1}\r\n\n  \n\ufeff{"b":"é"}\n')), [
    { text: '{"a":1}' },
    { text: "  " },
    { text: '\ufeff{"b":"é"}' }, // kept: the transport answers it -32700
  ]);
  assert.equal(splitter.flush(), undefined);
});

Deno.test("pushText: lines split across chunks, and an unterminated last line", () => {
  const splitter = new LineSplitter(1024);
  assert.deepEqual(splitter.pushText(bytes('{"a":')), []);
  assert.deepEqual(show(splitter.pushText(bytes('1}\n{"b":2}\n{"c"'))), [
    { bytes: '{"a":1}' },
    { text: '{"b":2}' },
  ]);
  assert.deepEqual(show(splitter.pushText(bytes(":3}"))), []);
  assert.deepEqual(show([splitter.flush()!]), [{ bytes: '{"c":3}' }]);
});

Deno.test("pushText: invalid UTF-8 leaves every line of the chunk as bytes, judged alone", () => {
  const splitter = new LineSplitter(1024);
  const chunk = new Uint8Array([...bytes('{"a":1}\n'), 0xff, 0xfe, 0x0a, ...bytes("{}\n")]);
  const lines = splitter.pushText(chunk);
  assert.equal(lines.length, 3);
  assert.ok(lines.every((l) => "bytes" in l));
  assert.deepEqual([...(lines[1] as { bytes: Uint8Array }).bytes], [0xff, 0xfe]);
});

Deno.test("pushText: a U+FFFD the client sent is valid UTF-8: its lines decode as before", () => {
  const splitter = new LineSplitter(1024);
  const lines = splitter.pushText(bytes('{"a":"\ufffd"}\n{"b":2}\n'));
  // Decoded line by line (the chunk's text cannot tell it from invalid UTF-8), to the same text.
  assert.deepEqual(show(lines), [{ bytes: '{"a":"\ufffd"}' }, { bytes: '{"b":2}' }]);
});

Deno.test("pushText: a line over the limit is reported, the next one is served", () => {
  const splitter = new LineSplitter(8);
  assert.deepEqual(show(splitter.pushText(bytes('"0123456789"\n{}\n'))), [
    { tooLong: 12 },
    { bytes: "{}" },
  ]);
  assert.deepEqual(show(splitter.pushText(bytes("[1]\n"))), [{ text: "[1]" }]);
});
