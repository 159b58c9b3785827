/**
 * Soak: tasks against a `cli serve --http` child of a checkout (issue 30,
 * item 4). Copy `bench/servers/tasks_flood_server.ts` into the checkout for
 * `handlers` and `kvcpu` (FIG_MODULE=bench/servers/tasks_flood_server.ts);
 * FIG_V8 passes V8 flags (a heap cap) to the server.
 *
 *     deno run -A bench/soak_tasks.ts <checkout> flood10k
 *     deno run -A bench/soak_tasks.ts <checkout> inputflood 100000
 *     FIG_MODULE=bench/servers/tasks_flood_server.ts deno run -A bench/soak_tasks.ts <checkout> handlers 50000
 *     FIG_MODULE=bench/servers/tasks_flood_server.ts deno run -A bench/soak_tasks.ts <checkout> kvcpu 10000
 *
 * flood10k: one session asks for 10k tasks, then another session for 10.
 * inputflood N: N confirm_delete tasks (ttl 1 s) from 20 sessions; RSS.
 * handlers N: N await_input tasks (ttl 1 s); the handlers alive at the end and 3 s later.
 * kvcpu N: N running tasks on a KV task store (1,000 a session); server CPU over 30 s.
 *
 * @module
 */

const [root, figure, arg] = Deno.args;
const module = Deno.env.get("FIG_MODULE") ?? "examples/everything.ts";

async function start(flags: string[]) {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      ...(Deno.env.get("FIG_V8") ? [`--v8-flags=${Deno.env.get("FIG_V8")}`] : []),
      "cli/main.ts",
      "serve",
      module,
      "--http",
      "--port",
      "0",
      ...flags,
    ],
    cwd: root,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  // --log-level error: no listening line? read until url appears or fallback
  let url: string | undefined;
  while (!url) {
    const { value, done } = await reader.read();
    if (done) throw new Error(seen);
    seen += value;
    url = seen.match(/listening on (\S+)/)?.[1];
  }
  (async () => {
    while (!(await reader.read()).done);
  })();
  const stat = async () => {
    const s = await Deno.readTextFile(`/proc/${child.pid}/stat`);
    const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) / 100; // utime+stime seconds
  };
  const rss = async () =>
    Number((await Deno.readTextFile(`/proc/${child.pid}/status`)).match(/VmRSS:\s+(\d+)/)![1]) /
    1024;
  return {
    url,
    stat,
    rss,
    stop: async () => {
      child.kill("SIGKILL");
      await child.status;
    },
  };
}

async function session(url: string) {
  const init = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: { elicitation: {} },
        clientInfo: { name: "fig", version: "1" },
      },
    }),
  });
  await init.body?.cancel();
  const id = init.headers.get("mcp-session-id")!;
  const headers = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-session-id": id,
    "mcp-protocol-version": "2025-11-25",
  };
  await (await fetch(url, {
    method: "POST",
    headers,
    body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
  })).body?.cancel();
  let n = 0;
  const call = async (name: string, args: unknown, ttl?: number) => {
    const r = await fetch(url, {
      method: "POST",
      headers,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: ++n,
        method: "tools/call",
        params: { name, arguments: args, task: ttl === undefined ? {} : { ttl } },
      }),
    });
    const text = await r.text();
    const line = text.startsWith("{")
      ? text
      : text.split("\n").find((l) => l.startsWith("data: {"))!.slice(6);
    return JSON.parse(line);
  };
  return { id, call };
}

async function pool<T>(count: number, width: number, job: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(count);
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < count) {
      const i = next++;
      out[i] = await job(i);
    }
  }));
  return out;
}

type Answer = { error?: { code: number; message: string } };
const summarize = (answers: Answer[]) => {
  const by: Record<string, number> = {};
  for (const a of answers) {
    const k = a.error ? `error ${a.error.code} ${a.error.message.slice(0, 40)}` : "created";
    by[k] = (by[k] ?? 0) + 1;
  }
  return by;
};

if (figure === "flood10k") {
  const s = await start([]);
  try {
    const a = await session(s.url);
    const t0 = performance.now();
    const answers = await pool(10_000, 32, () => a.call("slow_compute", { seconds: 120 }));
    const ms = performance.now() - t0;
    console.log(`session A: 10000 creations in ${(ms / 1000).toFixed(1)} s:`, summarize(answers));
    const b = await session(s.url);
    const bAnswers = await pool(10, 1, () => b.call("slow_compute", { seconds: 120 }));
    console.log("session B, 10 creations:", summarize(bAnswers));
    await a.call("slow_compute", { seconds: 0 }); // keep alive
    // A DELETEs; a new session C then:
    console.log(`rss ${(await s.rss()).toFixed(0)} MB`);
  } finally {
    await s.stop();
  }
} else if (figure === "inputflood") {
  const total = Number(arg ?? 50_000);
  const s = await start([]);
  try {
    const r0 = await s.rss();
    const sessions = await Promise.all(Array.from({ length: 20 }, () => session(s.url)));
    let peak = r0;
    const watch = setInterval(async () => {
      peak = Math.max(peak, await s.rss());
    }, 250);
    const t0 = performance.now();
    const answers = await pool(
      total,
      64,
      (i) =>
        sessions[i % 20].call("confirm_delete", { filename: `f${i}` }, 1000).catch((e) => ({
          error: { code: 0, message: String(e) },
        })),
    );
    const secs = (performance.now() - t0) / 1000;
    const rEnd = await s.rss();
    await new Promise((r) => setTimeout(r, 5000));
    const r5 = await s.rss();
    clearInterval(watch);
    console.log(
      `${total} confirm_delete tasks (ttl 1 s) from 20 sessions in ${secs.toFixed(1)} s:`,
      summarize(answers),
    );
    console.log(
      `RSS start ${r0.toFixed(0)} MB, peak ${peak.toFixed(0)} MB, at end ${
        rEnd.toFixed(0)
      } MB, 5 s later ${r5.toFixed(0)} MB`,
    );
  } finally {
    await s.stop();
  }
} else if (figure === "handlers") {
  const total = Number(arg ?? 50_000);
  const s = await start([]);
  try {
    const sessions = await Promise.all(Array.from({ length: 20 }, () => session(s.url)));
    const t0 = performance.now();
    const answers = await pool(total, 64, (i) => sessions[i % 20].call("await_input", {}, 1000));
    const secs = (performance.now() - t0) / 1000;
    const probe = await session(s.url);
    const read = async () => {
      const r = await fetch(s.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2025-11-25",
            capabilities: {},
            clientInfo: { name: "p", version: "1" },
          },
        }),
      });
      await r.body?.cancel();
      const h = {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": r.headers.get("mcp-session-id")!,
        "mcp-protocol-version": "2025-11-25",
      };
      const text = await (await fetch(s.url, {
        method: "POST",
        headers: h,
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 2,
          method: "tools/call",
          params: { name: "handlers", arguments: {} },
        }),
      })).text();
      const line = text.startsWith("{")
        ? text
        : text.split("\n").find((l) => l.startsWith("data: {"))!.slice(6);
      return JSON.parse(JSON.parse(line).result.content[0].text);
    };
    void probe;
    console.log(
      `${total} await_input tasks (ttl 1 s) from 20 sessions in ${secs.toFixed(1)} s:`,
      summarize(answers),
    );
    console.log("at flood end:", await read(), `RSS ${(await s.rss()).toFixed(0)} MB`);
    await new Promise((r) => setTimeout(r, 3000));
    console.log("3 s later:", await read(), `RSS ${(await s.rss()).toFixed(0)} MB`);
  } finally {
    await s.stop();
  }
} else if (figure === "kvcpu") {
  const total = Number(arg ?? 10_000);
  const dir = await Deno.makeTempDir();
  const s = await start(["--task-store", `kv:${dir}/t.kv`]);
  try {
    const per = 1000;
    const sessions = await Promise.all(
      Array.from({ length: Math.ceil(total / per) }, () => session(s.url)),
    );
    const t0 = performance.now();
    const answers = await pool(
      total,
      32,
      (i) => sessions[Math.floor(i / per)].call("hold", {}, 3_600_000),
    );
    console.log(
      `${total} running KV tasks created in ${((performance.now() - t0) / 1000).toFixed(1)} s:`,
      summarize(answers),
    );
    await new Promise((r) => setTimeout(r, 5000));
    const c0 = await s.stat();
    const w0 = performance.now();
    await new Promise((r) => setTimeout(r, 30_000));
    const cpu = (await s.stat()) - c0;
    const wall = (performance.now() - w0) / 1000;
    console.log(
      `server CPU over ${wall.toFixed(0)} s with them running: ${cpu.toFixed(2)} s = ${
        (100 * cpu / wall).toFixed(0)
      }% of a core; RSS ${(await s.rss()).toFixed(0)} MB`,
    );
  } finally {
    await s.stop();
    await Deno.remove(dir, { recursive: true });
  }
}
