/** Runs a command to its end for a test, without colour, and decodes what it printed. */

/** What a finished command printed and how it ended. */
export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Options of {@link runCommand}. */
export interface RunOptions {
  /** Where it runs. */
  cwd: string | URL;
  /** Variables beside the inherited environment (NO_COLOR=1 is always set). */
  env?: Record<string, string>;
  /** Kills it when aborted. */
  signal?: AbortSignal;
}

const decoder = new TextDecoder();

/** Runs `command args` (stdin closed) and returns its exit code and output. */
export async function runCommand(
  command: string,
  args: string[],
  options: RunOptions,
): Promise<CommandResult> {
  const out = await new Deno.Command(command, {
    args,
    cwd: options.cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: options.signal,
    env: { NO_COLOR: "1", ...options.env },
  }).output();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}
