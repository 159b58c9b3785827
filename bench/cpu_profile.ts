/**
 * Summarizes a V8 `.cpuprofile` (from `deno run --cpu-prof`): the share of
 * JS-thread time by area and the top functions by self time, with
 * `file:line`. Idle time (V8 waiting, which includes Deno's Rust-side HTTP
 * work on the same thread) is reported apart.
 *
 * `deno run -A bench/cpu_profile.ts PROFILE.cpuprofile [TOP]`
 *
 * @module
 */

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
}

/** The parts of a `.cpuprofile` read here. */
export interface CpuProfile {
  /** Call tree nodes. */
  nodes: ProfileNode[];
  /** The node sampled at each tick. */
  samples: number[];
  /** Microseconds between ticks. */
  timeDeltas: number[];
}

/** Areas that self time is sorted into, first match wins. */
const AREAS: [string, (url: string, name: string) => boolean][] = [
  ["GC", (_, name) => name === "(garbage collector)"],
  ["(program)", (_, name) => name === "(program)"],
  ["timers", (url, name) => url.includes("timers") || name.startsWith("op_timer")],
  [
    "JSON.parse + UTF-8 decode",
    (url, name) =>
      (url.endsWith("core/json_rpc.ts") && name === "decodeMessage") ||
      name === "op_encoding_decode_single" || url.includes("08_text_encoding"),
  ],
  ["schema validation", (url) => /core\/(json_)?schema\.ts$/.test(url)],
  ["engine, frame, registry, tools, dialects", (url) => /\/(core|dialects)\//.test(url)],
  ["transport-http", (url) => url.includes("/transport-http/")],
  ["transport-stdio", (url) => url.includes("/transport-stdio/")],
  ["events, AbortSignal", (url) => url.includes("02_event") || url.includes("03_abort_signal")],
  [
    "Deno HTTP, Request/Response, Headers, body",
    (url, name) => /^ext:deno_(http|fetch|webidl)/.test(url) || name.startsWith("op_http"),
  ],
  ["stdio writes and reads", (_, name) => name === "op_write_all" || name === "op_read"],
  ["Web streams", (url) => url.includes("06_streams")],
  ["other runtime", () => true],
];

/**
 * Self time per node, in microseconds.
 *
 * @param profile The profile.
 * @returns Microseconds by node id.
 */
export function selfTimes(profile: CpuProfile): Map<number, number> {
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) =>
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0))
  );
  return self;
}

/**
 * The summary as text lines.
 *
 * @param profile The profile.
 * @param top How many functions to list.
 * @returns The lines.
 */
export function summarize(profile: CpuProfile, top = 30): string[] {
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const areas = new Map<string, number>();
  const functions = new Map<string, number>();
  let idle = 0;
  let busy = 0;
  for (const [id, micros] of selfTimes(profile)) {
    const frame = frames.get(id)!;
    if (frame.functionName === "(idle)") {
      idle += micros;
      continue;
    }
    busy += micros;
    const area = AREAS.find(([, matches]) => matches(frame.url, frame.functionName))![0];
    areas.set(area, (areas.get(area) ?? 0) + micros);
    const url = frame.url.replace(
      /^file:\/\/.*?\/((core|dialects|transport-\w+|cli|bench)\/)/,
      "$1",
    );
    const key = `${frame.functionName || "(anonymous)"} ${url}${
      url ? `:${frame.lineNumber + 1}` : ""
    }`;
    functions.set(key, (functions.get(key) ?? 0) + micros);
  }
  const share = (micros: number) => `${(100 * micros / busy).toFixed(1).padStart(5)}%`;
  const sorted = (map: Map<string, number>) => [...map].sort((a, b) => b[1] - a[1]);
  return [
    `sampled ${((idle + busy) / 1e6).toFixed(1)} s; JS thread busy ${
      (100 * busy / (idle + busy)).toFixed(0)
    }% (shares below are of the busy time)`,
    "by area:",
    ...sorted(areas).map(([name, micros]) => `${share(micros)}  ${name}`),
    "by function, self time:",
    ...sorted(functions).slice(0, top).map(([name, micros]) => `${share(micros)}  ${name}`),
  ];
}

if (import.meta.main) {
  const [path, top] = Deno.args;
  if (!path) {
    console.error("usage: deno run -A bench/cpu_profile.ts PROFILE.cpuprofile [TOP]");
    Deno.exit(2);
  }
  const profile = JSON.parse(await Deno.readTextFile(path)) as CpuProfile;
  console.log(summarize(profile, Number(top ?? 30)).join("\n"));
}
