import { randomBytes } from "node:crypto";
import { shellQuote } from "@open-managed-agents/runtime-resource-contract";
import { type MappedProcess, rewriteSandboxPaths } from "@open-managed-agents/local-confinement";
import { exitCodeOf, helperPath, isDirectory, startCommand } from "./command-runner.js";
import type { LocalContainer } from "./container-registry.js";
import type { FileHelper } from "./file-helper.js";
import { deleteFile, makeDirectory, openForRead } from "./file-ops.js";
import { ControlApiError } from "./control-api-error.js";

/** How often a waiting command looks for its exit file; the shell writes it once, atomically. */
const POLL_MS = 25;
/** The exit file holds a status and a cwd; more is not the shell's. */
const EXIT_FILE_BYTES = 8_192;

/** What one foreground command left behind. */
export interface ShellResult {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly truncated: boolean;
  /** The shell's working directory after the command. */
  readonly cwd: string;
}

/** Per-call settings of a foreground command; they do not outlive it. */
export interface ShellCommandOptions {
  readonly cwd?: string | undefined;
  readonly env?: Readonly<Record<string, string>> | undefined;
  readonly timeoutMs?: number | undefined;
}

/**
 * A session's persistent bash, as the published container runs one per session: every foreground
 * command is written to its stdin and runs in the shell itself, so `cd`, exports, functions and
 * aliases carry to the next one. Output goes to per-command files in the session directory; the exit
 * code is published last, by rename.
 */
export interface SessionShell {
  readonly process: MappedProcess;
  /** Container path of the directory holding the command files. */
  readonly directory: string;
  /** Runs one command; rejects with 500 `COMMAND_EXECUTION_ERROR` on timeout, 410 `SESSION_TERMINATED` when the shell exits. */
  run(command: string, options: ShellCommandOptions): Promise<ShellResult>;
  /** Resolves with the shell's exit code once it ended. */
  readonly ended: Promise<number>;
  /** Kills the shell and everything in its process group. */
  kill(): void;
}

const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Starts the persistent shell of session `sessionId` in `cwd` (its home when `cwd` does not exist). */
export async function startSessionShell(
  container: LocalContainer,
  sessionId: string,
  cwd: string,
  env: Readonly<Record<string, string>>,
  maxOutputBytes: number,
): Promise<SessionShell> {
  const directory = `/tmp/.oma-session-${randomBytes(8).toString("hex")}`;
  await makeDirectory(container.files, helperPath(container, directory), true);
  const start = (await isDirectory(container, cwd)) ? cwd : (env.HOME ?? "/");
  const spawned = container.namespace.spawn({
    command: "bash",
    args: ["--norc", "--noprofile"],
    cwd: start,
    env: { ...env, LANG: "C.UTF-8", LC_ALL: "C.UTF-8" },
  });
  // The shell's own output is unused (commands write to files); draining keeps it from blocking.
  spawned.child.stdout?.resume();
  spawned.child.stderr?.resume();
  spawned.child.stdin?.on("error", () => undefined);
  const ended = spawned.exited.then(exitCodeOf);
  let exitCode: number | undefined;
  void ended.then(async (code) => {
    exitCode = code;
    // What timed-out commands left there goes with the shell.
    removeInContainer(container, directory);
  });
  const terminated = (code: number): ControlApiError =>
    new ControlApiError(
      "SESSION_TERMINATED",
      410,
      `Session '${sessionId}' shell exited (exit code: ${code})`,
      { sessionId, exitCode: code },
      {
        suggestion:
          "Avoid running `exit` at the top level of a session command; use a subshell `(exit N)` instead",
      },
    );
  const file = (id: string, suffix: string): string =>
    helperPath(container, `${directory}/${id}.${suffix}`);

  return {
    process: spawned,
    directory,
    ended,
    kill() {
      spawned.kill("SIGKILL");
    },
    async run(command, options) {
      if (exitCode !== undefined) throw terminated(exitCode);
      const id = randomBytes(8).toString("hex");
      const script = commandScript(command, `${directory}/${id}`, options);
      // A `rewrite` container's commands see host paths; arguments are rewritten at spawn, stdin here.
      spawned.child.stdin?.write(
        `${container.namespace.mode === "rewrite" ? rewriteSandboxPaths(script, container.mounts) : script}\n`,
      );
      const outcome = await waitForExit(
        container.files,
        file(id, "exit"),
        ended,
        options.timeoutMs,
      );
      if (outcome.kind === "ended") throw terminated(outcome.code);
      if (outcome.kind === "timeout") {
        // The command keeps running in the shell, as on the published container; its files stay until the session goes.
        throw new ControlApiError(
          "COMMAND_EXECUTION_ERROR",
          500,
          `Failed to execute command '${command}' in session '${sessionId}': Command timeout after ${options.timeoutMs}ms`,
          {
            command,
            stderr: `Command timeout after ${options.timeoutMs}ms`,
          },
        );
      }
      const [stdout, stderr] = await Promise.all([
        readBounded(container.files, file(id, "out"), maxOutputBytes),
        readBounded(container.files, file(id, "err"), maxOutputBytes),
      ]);
      await Promise.all(
        ["out", "err", "exit"].map((suffix) =>
          deleteFile(container.files, file(id, suffix)).catch(() => undefined),
        ),
      );
      return {
        exitCode: outcome.code,
        cwd: outcome.cwd,
        stdout: stdout.text,
        stderr: stderr.text,
        truncated: stdout.truncated || stderr.truncated,
      };
    },
  };
}

/**
 * The block written to the shell for one command. Per-call env is exported around the command and
 * restored after; a per-call cwd is entered and left again. stdin is /dev/null: the shell's own stdin
 * carries the commands.
 */
function commandScript(command: string, base: string, options: ShellCommandOptions): string {
  const quotedBase = shellQuote(base);
  const setup: string[] = [];
  const restore: string[] = [];
  for (const [index, [name, value]] of Object.entries(options.env ?? {}).entries()) {
    if (!VARIABLE_NAME.test(name)) continue;
    const saved = `__oma_prev_${index}`;
    setup.push(
      `if [ "\${${name}+x}" = x ]; then ${saved}=$(printf '%q' "$${name}"); else unset ${saved}; fi; export ${name}=${shellQuote(value)}`,
    );
    restore.push(
      `if [ "\${${saved}+x}" = x ]; then eval "export ${name}=$${saved}"; unset ${saved}; else unset ${name}; fi`,
    );
  }
  const body = [...setup, command, "__oma_status=$?", ...restore].join("\n");
  const redirect = `< /dev/null > ${quotedBase}.out 2> ${quotedBase}.err`;
  const lines =
    options.cwd === undefined
      ? [`{\n${body}\n} ${redirect}`]
      : [
          `__oma_dir=$PWD`,
          `if cd -- ${shellQuote(options.cwd)} 2>/dev/null; then`,
          `{\n${body}\n} ${redirect}`,
          `cd -- "$__oma_dir"`,
          `else printf "Failed to change directory to '%s'" ${shellQuote(options.cwd)} > ${quotedBase}.err; : > ${quotedBase}.out; __oma_status=1; fi`,
        ];
  return [
    `{`,
    ...lines,
    `printf '%s\\n%s' "$__oma_status" "$PWD" > ${quotedBase}.exit.tmp && mv -f ${quotedBase}.exit.tmp ${quotedBase}.exit`,
    `}`,
  ].join("\n");
}

type Outcome =
  | { kind: "exit"; code: number; cwd: string }
  | { kind: "ended"; code: number }
  | { kind: "timeout" };

async function waitForExit(
  files: FileHelper,
  exitFile: string,
  ended: Promise<number>,
  timeoutMs: number | undefined,
): Promise<Outcome> {
  const deadline = timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + timeoutMs;
  let endedCode: number | undefined;
  void ended.then((code) => {
    endedCode = code;
  });
  for (;;) {
    const text = (await readBounded(files, exitFile, EXIT_FILE_BYTES)).text;
    const separator = text.indexOf("\n");
    const code = Number.parseInt(text.slice(0, separator), 10);
    // Missing, or not what the shell writes (a status line, then the cwd): not written yet.
    if (separator > 0 && Number.isInteger(code))
      return { kind: "exit", code, cwd: text.slice(separator + 1) };
    if (endedCode !== undefined) return { kind: "ended", code: endedCode };
    if (Date.now() >= deadline) return { kind: "timeout" };
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/**
 * Reads at most `maxBytes` of a file through the container's file helper, so the kernel resolves the
 * path in the container's root whatever the container swapped it for; a missing file reads empty.
 */
async function readBounded(
  files: FileHelper,
  path: string,
  maxBytes: number,
): Promise<{ text: string; truncated: boolean }> {
  let file: Awaited<ReturnType<typeof openForRead>>;
  try {
    file = await openForRead(files, path);
  } catch {
    return { text: "", truncated: false };
  }
  try {
    if (file.stat.type !== "file") return { text: "", truncated: false };
    const pieces: Buffer[] = [];
    let total = 0;
    while (total < maxBytes) {
      const piece = await file.read(maxBytes - total);
      if (piece.length === 0) break;
      pieces.push(piece);
      total += piece.length;
    }
    const more =
      total >= maxBytes && (file.stat.size > maxBytes || (await file.read(1)).length > 0);
    return { text: Buffer.concat(pieces, total).toString("utf8"), truncated: more };
  } finally {
    await file.close().catch(() => undefined);
  }
}

/** Removes the session directory with `rm` run in the container, so a swapped path resolves there too. */
function removeInContainer(container: LocalContainer, directory: string): void {
  try {
    const removal = startCommand(container, {
      command: 'rm -rf -- "$1"',
      args: [directory],
      cwd: "/tmp",
      env: { PATH: "/usr/bin:/bin" },
    });
    removal.child.stdout?.resume();
    removal.child.stderr?.resume();
    void removal.exited.catch(() => undefined);
  } catch {
    // The container is going away, and its trees with it.
  }
}
