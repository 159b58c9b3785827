/**
 * The YAML frontmatter of a `SKILL.md` (SEP-2640), read into the JSON object
 * a skill entry publishes as its `frontmatter`.
 *
 * It reads the subset of YAML that skills are written in: block mappings
 * (nested by indentation), block sequences of scalars, plain, single- and
 * double-quoted scalars, literal (`|`) and folded (`>`) block scalars, and
 * comments, typed as the YAML 1.2 core schema types them (what `yaml`'s
 * `parse` gives). Anything else (flow collections, anchors, tags, hex and
 * octal numbers, `.inf`) is refused with an error naming its line, never read
 * differently from a full YAML parser: a host compares the entry with the file
 * it reads, field by field.
 *
 * @module
 */

/** A frontmatter that cannot be read, with the line (of the whole file) at fault. */
export class FrontmatterError extends Error {
  constructor(message: string, line?: number) {
    super(line === undefined ? message : `line ${line}: ${message}`);
    this.name = "FrontmatterError";
  }
}

interface Line {
  no: number;
  indent: number;
  text: string;
}

/** Splits a `SKILL.md` into its frontmatter, parsed, and its markdown body. */
export function parseSkillMarkdown(
  markdown: string,
): { frontmatter: Record<string, unknown>; body: string } {
  let text = markdown.replaceAll("\r\n", "\n");
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (!text.startsWith("---\n")) {
    throw new FrontmatterError('SKILL.md must begin with a "---" line', 1);
  }
  const rest = text.slice(4);
  const close = /^---[ \t]*$/m.exec(rest);
  if (!close) throw new FrontmatterError('the frontmatter has no closing "---" line');
  const yaml = rest.slice(0, close.index);
  const lines: Line[] = [];
  yaml.split("\n").forEach((raw, i) => {
    const indent = /^ */.exec(raw)![0].length;
    if (raw[indent] === "\t") throw new FrontmatterError("tabs cannot indent YAML", i + 2);
    lines.push({ no: i + 2, indent, text: raw.slice(indent).trimEnd() });
  });
  const parser = new Parser(lines);
  const frontmatter = parser.document();
  return { frontmatter, body: rest.slice(close.index + close[0].length).replace(/^\n/, "") };
}

const SEQUENCE_ITEM = /^-( |$)/;

class Parser {
  #at = 0;
  constructor(readonly lines: Line[]) {}

  document(): Record<string, unknown> {
    const first = this.#peek();
    if (!first) return {};
    if (SEQUENCE_ITEM.test(first.text) || keyAt(first.text) === undefined) {
      throw new FrontmatterError('the frontmatter must be "key: value" lines', first.no);
    }
    const map = this.#mapping(first.indent);
    const extra = this.#peek();
    if (extra) throw new FrontmatterError("unexpected content", extra.no);
    return map;
  }

  // The next line that is neither blank nor a comment.
  #peek(): Line | undefined {
    while (this.#at < this.lines.length) {
      const line = this.lines[this.#at];
      if (line.text !== "" && !line.text.startsWith("#")) return line;
      this.#at++;
    }
    return undefined;
  }

  #mapping(indent: number): Record<string, unknown> {
    const map: Record<string, unknown> = {};
    for (let line = this.#peek(); line && line.indent >= indent; line = this.#peek()) {
      if (line.indent > indent) throw new FrontmatterError("unexpected indentation", line.no);
      if (SEQUENCE_ITEM.test(line.text)) break;
      const { key, rest } = splitKey(line);
      if (Object.hasOwn(map, key)) throw new FrontmatterError(`duplicate key "${key}"`, line.no);
      this.#at++;
      map[key] = this.#value(rest, line, indent);
    }
    return map;
  }

  #sequence(indent: number): unknown[] {
    const items: unknown[] = [];
    for (let line = this.#peek(); line && line.indent >= indent; line = this.#peek()) {
      if (line.indent > indent) throw new FrontmatterError("unexpected indentation", line.no);
      if (!SEQUENCE_ITEM.test(line.text)) break;
      const rest = line.text.slice(1).trimStart();
      if (rest === "" || SEQUENCE_ITEM.test(rest) || keyAt(rest) !== undefined) {
        throw new FrontmatterError("only scalars are supported as sequence items", line.no);
      }
      this.#at++;
      items.push(this.#value(rest, line, indent));
    }
    return items;
  }

  // The value after `key:` (or `- `) on `line`, whose parent sits at `indent`.
  #value(rest: string, line: Line, indent: number): unknown {
    if (rest === "" || rest.startsWith("#")) {
      const next = this.#peek();
      if (next && next.indent > indent) {
        if (SEQUENCE_ITEM.test(next.text)) return this.#sequence(next.indent);
        if (keyAt(next.text) !== undefined) return this.#mapping(next.indent);
        throw new FrontmatterError("a value must start on its key's line", next.no);
      }
      // A compact sequence: `key:` then `- item` at the key's own indentation.
      if (next && next.indent === indent && SEQUENCE_ITEM.test(next.text)) {
        return this.#sequence(indent);
      }
      return null;
    }
    const first = rest[0];
    if (first === '"' || first === "'") {
      const { value, end } = quoted(rest, line.no);
      onlyComment(rest.slice(end), line.no);
      return value;
    }
    if (first === "|" || first === ">") return this.#block(rest, line, indent);
    if ("[{&*!%@`,]}?".includes(first)) {
      throw new FrontmatterError(
        `a value starting with "${first}" is not supported; quote it`,
        line.no,
      );
    }
    return this.#plain(rest, line, indent);
  }

  #plain(first: string, line: Line, indent: number): unknown {
    let value = withoutComment(first, line.no);
    let commented = value.length !== first.trimEnd().length;
    // Continuation lines, more indented than the parent, fold into one line.
    for (let next = this.lines[this.#at]; next; next = this.lines[this.#at]) {
      if (next.text === "" || next.indent <= indent || next.text.startsWith("#")) break;
      if (commented) {
        throw new FrontmatterError("a comment ends a plain value; quote a longer value", next.no);
      }
      const part = withoutComment(next.text, next.no);
      commented = part.length !== next.text.length;
      value += " " + part;
      this.#at++;
    }
    return typed(value, line.no);
  }

  #block(header: string, line: Line, indent: number): string {
    const match = /^([|>])(-?)(\s+#.*)?$/.exec(header);
    if (!match) {
      throw new FrontmatterError(`block scalar header "${header}" is not supported`, line.no);
    }
    const [, style, chomp] = match;
    const raw: { indent: number; text: string }[] = [];
    let contentIndent = -1;
    while (this.#at < this.lines.length) {
      const next = this.lines[this.#at];
      if (next.text === "") {
        raw.push({ indent: -1, text: "" });
        this.#at++;
        continue;
      }
      if (contentIndent === -1) {
        if (next.indent <= indent) break;
        contentIndent = next.indent;
      }
      if (next.indent < contentIndent) break;
      if (style === ">" && next.indent > contentIndent) {
        throw new FrontmatterError(
          "more-indented lines in a folded scalar are not supported",
          next.no,
        );
      }
      raw.push({ indent: next.indent, text: " ".repeat(next.indent - contentIndent) + next.text });
      this.#at++;
    }
    // Trailing blank lines belong to no value: they stay unread.
    while (raw.length > 0 && raw[raw.length - 1].indent === -1) {
      raw.pop();
      this.#at--;
    }
    if (raw.length === 0) return "";
    let text = "";
    if (style === "|") text = raw.map((r) => r.text).join("\n");
    else {
      for (let i = 0; i < raw.length; i++) {
        if (i === 0) text = raw[i].text;
        else if (raw[i].text === "") text += "\n";
        else text += raw[i - 1].text === "" ? raw[i].text : " " + raw[i].text;
      }
    }
    return chomp === "-" ? text : text + "\n";
  }
}

// Where the `:` of a `key: value` line is, or undefined when the line is no key.
function keyAt(text: string): number | undefined {
  if (text[0] === '"' || text[0] === "'") {
    try {
      const { end } = quoted(text, 0);
      return text[end] === ":" && (end + 1 === text.length || text[end + 1] === " ")
        ? end
        : undefined;
    } catch {
      return undefined;
    }
  }
  for (let i = 0; i < text.length; i++) {
    if (text[i] === "#" && i > 0 && text[i - 1] === " ") return undefined;
    if (text[i] === ":" && (i + 1 === text.length || text[i + 1] === " ")) return i;
  }
  return undefined;
}

function splitKey(line: Line): { key: string; rest: string } {
  const at = keyAt(line.text);
  if (at === undefined) throw new FrontmatterError('expected "key: value"', line.no);
  const rawKey = line.text.slice(0, at).trimEnd();
  let key: string;
  if (rawKey[0] === '"' || rawKey[0] === "'") key = quoted(rawKey, line.no).value;
  else {
    if ("[{&*!%@`,]}?|>-".includes(rawKey[0] ?? "")) {
      throw new FrontmatterError(`key "${rawKey}" is not supported; quote it`, line.no);
    }
    if (typeof typed(rawKey, line.no) !== "string") {
      throw new FrontmatterError(`key "${rawKey}" is not a string; quote it`, line.no);
    }
    key = rawKey;
  }
  if (key === "" || key === "__proto__") {
    throw new FrontmatterError(`key "${key}" is not supported`, line.no);
  }
  return { key, rest: line.text.slice(at + 1).trimStart() };
}

function quoted(text: string, no: number): { value: string; end: number } {
  const quote = text[0];
  let value = "";
  for (let i = 1; i < text.length; i++) {
    const char = text[i];
    if (quote === "'") {
      if (char !== "'") value += char;
      else if (text[i + 1] === "'") value += text[++i];
      else return { value, end: i + 1 };
      continue;
    }
    if (char === '"') return { value, end: i + 1 };
    if (char !== "\\") {
      value += char;
      continue;
    }
    const escape = text[++i];
    const simple: Record<string, string> = {
      '"': '"',
      "\\": "\\",
      "/": "/",
      "n": "\n",
      "t": "\t",
      "r": "\r",
      "0": "\0",
      " ": " ",
    };
    if (escape in simple) value += simple[escape];
    else if (escape === "u" && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) {
      value += String.fromCharCode(parseInt(text.slice(i + 1, i + 5), 16));
      i += 4;
    } else throw new FrontmatterError(`unsupported escape "\\${escape ?? ""}"`, no);
  }
  throw new FrontmatterError("a quoted value must end on its own line", no);
}

function onlyComment(rest: string, no: number): void {
  const trimmed = rest.trim();
  if (trimmed !== "" && !(trimmed.startsWith("#") && /^\s/.test(rest))) {
    throw new FrontmatterError("unexpected text after a quoted value", no);
  }
}

function withoutComment(text: string, no: number): string {
  const at = text.search(/ #/);
  const value = (at === -1 ? text : text.slice(0, at)).trimEnd();
  if (/: |:$/.test(value)) {
    throw new FrontmatterError('a plain value cannot hold ": "; quote it', no);
  }
  return value;
}

const INT = /^[-+]?[0-9]+$/;
const FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;

// A plain scalar as the YAML 1.2 core schema types it.
function typed(value: string, no: number): unknown {
  if (/^(null|Null|NULL|~)$/.test(value)) return null;
  if (/^(true|True|TRUE)$/.test(value)) return true;
  if (/^(false|False|FALSE)$/.test(value)) return false;
  if (INT.test(value) || FLOAT.test(value)) {
    const number = Number(value);
    if (!Number.isFinite(number) || (INT.test(value) && !Number.isSafeInteger(number))) {
      throw new FrontmatterError(`number ${value} is out of range; quote it`, no);
    }
    return number;
  }
  if (/^[-+]?(0x|0o|\.inf|\.Inf|\.INF|\.nan|\.NaN|\.NAN)/.test(value)) {
    throw new FrontmatterError(`"${value}" is not supported; quote it`, no);
  }
  return value;
}
