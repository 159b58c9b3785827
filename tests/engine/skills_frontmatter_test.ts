/**
 * The `SKILL.md` frontmatter reader (`core/_frontmatter.ts`) reads what it
 * accepts exactly as the `yaml` package (YAML 1.2 core schema, which the
 * conformance suite and hosts compare against) does, and refuses the rest
 * with the line at fault.
 */

import assert from "node:assert/strict";
import { parse } from "yaml";
import { FrontmatterError, parseSkillMarkdown } from "../../core/_frontmatter.ts";

const read = (yaml: string) => parseSkillMarkdown(`---\n${yaml}---\nbody\n`).frontmatter;

/** Frontmatters as skills write them: each must read as `yaml` reads it. */
const ACCEPTED = [
  "name: pdf\ndescription: Fill PDF forms\n",
  "name: a\ndescription: 'It''s quoted: with a colon'\n",
  'name: a\ndescription: "Escapes \\"\\\\ \\n\\t \\u00e9 and # not a comment"\n',
  "name: a # a comment\ndescription: plain with - dashes and:no space colon\n",
  "# leading comment\nname: a\n\ndescription: x\n",
  "name: a\ndescription: x\nlicense: MIT\ncompatibility: Requires git\n",
  'name: a\ndescription: x\nmetadata:\n  author: me\n  version: "1.0"\n  nested:\n    deep: true\n',
  "name: a\ndescription: x\nallowed-tools:\n  - Bash\n  - Read\n",
  "name: a\ndescription: x\nallowed-tools:\n- Bash\n- 'Read(*)'\n",
  "name: a\ndescription: |\n  Line one\n  line two\n\n  after a blank\nnext: 1\n",
  "name: a\ndescription: |-\n  Kept\n    indented\nnext: x\n",
  "name: a\ndescription: >\n  folded\n  into one\n\n  paragraph two\n",
  "name: a\ndescription: >-\n  folded, stripped\n  end\n",
  "name: a\ndescription: a plain value\n  continued on a second line\n",
  "name: a\ndescription: x\ncount: 12\nratio: -1.5e3\nhalf: .5\nyes: true\nshout: TRUE\nno: False\nnothing: null\ntilde: ~\nempty:\n",
  "name: a\ndescription: x\nversion: 1.0\nzero: 007\nsigned: +3\n",
  "'quoted key': 1\n\"another: key\": two\nname: a\ndescription: x\n",
  "name: a\ndescription: x\nurl: https://example.com/a#b\n",
  "name: a   \ndescription: trailing spaces   \n",
];

Deno.test("frontmatter: what the reader accepts, it reads as the yaml package does", () => {
  for (const yaml of ACCEPTED) {
    assert.deepEqual(read(yaml), parse(yaml), yaml);
  }
});

Deno.test("frontmatter: the file's form (BOM, CRLF, body) and an empty block", () => {
  const parsed = parseSkillMarkdown("\ufeff---\r\nname: a\r\ndescription: x\r\n---\r\n# Body\r\n");
  assert.deepEqual(parsed.frontmatter, { name: "a", description: "x" });
  assert.equal(parsed.body, "# Body\n");
  assert.deepEqual(parseSkillMarkdown("---\n---\n").frontmatter, {});
});

/** What the reader refuses, and the line it names (of the whole file). */
const REFUSED: [string, RegExp][] = [
  ["name: [a, b]\n", /line 2: .*"\["/],
  ["name: {a: 1}\n", /line 2: .*"\{"/],
  ["name: &anchor a\n", /line 2/],
  ["name: !!str a\n", /line 2/],
  ["name: a\nalias: *anchor\n", /line 3/],
  ["name: a\nname: b\n", /line 3: duplicate key "name"/],
  ["name: a\n\tdescription: x\n", /line 3: tabs/],
  ["number: 0x1F\n", /line 2: .*quote it/],
  ["number: .inf\n", /line 2: .*quote it/],
  ["big: 123456789012345678901234567890\n", /line 2: .*out of range/],
  ["__proto__: x\n", /line 2: key "__proto__"/],
  ["text: a: b\n", /line 2: .*": "/],
  ["list:\n  - key: value\n", /line 3: only scalars/],
  ["name: a\n  oops: indented\n", /line 3/],
  ["text: 'unterminated\n", /line 2: .*own line/],
  ['text: "bad \\q escape"\n', /line 2: unsupported escape/],
  ["text: |2\n  x\n", /line 2: block scalar header/],
  ["text: >\n  a\n    more\n", /line 4: more-indented/],
  ["- a\n", /line 2: the frontmatter must be "key: value" lines/],
];

Deno.test("frontmatter: what it cannot read alike is refused, naming the line", () => {
  for (const [yaml, message] of REFUSED) {
    assert.throws(() => read(yaml), (error: Error) => {
      assert.ok(error instanceof FrontmatterError, yaml);
      assert.match(error.message, message, yaml);
      return true;
    });
  }
  assert.throws(() => parseSkillMarkdown("name: a\n"), /line 1: SKILL.md must begin/);
  assert.throws(() => parseSkillMarkdown("---\nname: a\n"), /no closing "---"/);
});
