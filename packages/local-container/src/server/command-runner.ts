import { randomBytes } from "node:crypto";
import { readFile, rm, stat } from "node:fs/promises";
import { type MappedProcess, mapPath, normalizeSandboxPath } from "@open-managed-agents/sandbox/local-process";
import type { LocalContainer } from "./container-registry.js";
import type { SessionState } from "./sessions.js";

/** Largest session state file read back; larger means the command exported something absurd. */
const MAX_STATE_BYTES = 1024 * 1024;
/** Variables bash manages itself; carrying them over would confuse the next command. */
const TRANSIENT_VARIABLES = new Set(["PWD", "OLDPWD", "SHLVL", "_", "OPENMA_PATH_MAP"]);

/**
 * Runs the command with `eval` in a fresh bash, then records the shell's working directory and exported
 * environment to a state file. An `exit` inside the command ends the shell before the state is written,
 * which is how a session shell ends on the published control server too.
 */
const SESSION_STEP_SCRIPT = [
  '__oma_state_file=$1; __oma_command=$2; set --',
  'eval "$__oma_command"',
  '__oma_status=$?',
  '{ printf "%s\\0" "$PWD"; env -0; } > "$__oma_state_file" 2>/dev/null',
  'exit $__oma_status',
].join("\n");

/** A command to run in a container. */
export interface CommandSpec {
  readonly command: string;
  /** Working directory as a container path. */
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  /** The session whose state this command continues and updates; undefined runs it on its own. */
  readonly session?: SessionState;
}

/** A started command and how to read back its session state. */
export interface RunningCommand {
  readonly mapped: MappedProcess;
  /** After exit: the session's new state, or undefined when the shell exited early (session terminated). */
  readSessionState(): Promise<SessionState | undefined>;
}

/** Resolves `path` (absolute or relative to `cwd`) to a container path. */
export function containerPath(path: string, cwd = "/workspace"): string {
  return normalizeSandboxPath(path, cwd);
}

/**
 * Host path backing a container path. A confined container resolves it inside its root, following
 * symlinks as its own processes would (`followFinal: false` keeps a final symlink itself). In `rewrite`
 * mode a session's cwd is already a host path (the shell saw host paths), so a path under a host
 * directory of the container maps to itself.
 */
export function hostPath(container: LocalContainer, path: string, cwd = "/workspace", followFinal = true): string {
  if (container.root !== undefined) return container.root.hostPath(path, { cwd, followFinal });
  return mapPath(path, container.mounts, cwd, { mode: container.namespace.mode });
}

/** True when the container path is an existing directory. */
export async function isDirectory(container: LocalContainer, path: string): Promise<boolean> {
  try {
    return (await stat(hostPath(container, path))).isDirectory();
  } catch {
    return false;
  }
}

/** Exit code as a shell reports it: the code, or 128 + signal number. */
export function exitCodeOf(exit: Awaited<MappedProcess["exited"]>): number {
  if (exit.code !== null) return exit.code;
  const numbers: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 };
  return 128 + (exit.signal === null ? 1 : (numbers[exit.signal] ?? 1));
}

/** Starts `bash -c` for the spec in its own process group, with container paths mapped. */
export function startCommand(container: LocalContainer, spec: CommandSpec): RunningCommand {
  const session = spec.session;
  if (session === undefined) {
    const mapped = container.namespace.spawn({ command: "bash", args: ["-c", spec.command], cwd: spec.cwd, env: spec.env });
    return { mapped, readSessionState: async () => undefined };
  }
  const stateFile = `/tmp/.oma-session-state-${randomBytes(8).toString("hex")}`;
  const mapped = container.namespace.spawn({ command: "bash", args: ["-c", SESSION_STEP_SCRIPT, "bash", stateFile, spec.command], cwd: spec.cwd, env: spec.env });
  return {
    mapped,
    async readSessionState() {
      const file = hostPath(container, stateFile);
      try {
        const info = await stat(file);
        if (info.size > MAX_STATE_BYTES) return undefined;
        return parseState(session.id, await readFile(file, "utf8"));
      } catch {
        return undefined;
      } finally {
        await rm(file, { force: true });
      }
    },
  };
}

function parseState(id: string, text: string): SessionState | undefined {
  const [cwd, ...variables] = text.split("\0");
  if (cwd === undefined || cwd === "") return undefined;
  const env: Record<string, string> = {};
  for (const entry of variables) {
    const separator = entry.indexOf("=");
    if (separator <= 0) continue;
    const name = entry.slice(0, separator);
    if (!TRANSIENT_VARIABLES.has(name)) env[name] = entry.slice(separator + 1);
  }
  return { id, cwd, env };
}
