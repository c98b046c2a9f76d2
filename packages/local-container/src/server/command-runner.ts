import {
  type MappedProcess,
  mapPath,
  normalizeSandboxPath,
} from "@open-managed-agents/local-confinement";
import type { LocalContainer } from "./container-registry.js";
import { statPath } from "./file-ops.js";
// Sources the session shell's snapshot, then runs the command.
import SNAPSHOT_SCRIPT from "./scripts/run-with-snapshot.sh";

/** A command to run in a container. */
export interface CommandSpec {
  readonly command: string;
  /** Working directory as a container path. */
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  /** Positional parameters of the command (`$1`…); not used with a snapshot. */
  readonly args?: readonly string[];
  /** Container path of a session snapshot to source first (removed once read). */
  readonly snapshot?: string | undefined;
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
export function hostPath(
  container: LocalContainer,
  path: string,
  cwd = "/workspace",
  followFinal = true,
): string {
  if (container.root !== undefined) return container.root.hostPath(path, { cwd, followFinal });
  return mapPath(path, container.mounts, cwd, { mode: container.namespace.mode });
}

/**
 * The path the container's file helper opens for a container path: the path itself in a confined
 * container (the kernel resolves it in the container's root, races included), the host path otherwise.
 */
export function helperPath(container: LocalContainer, path: string): string {
  return container.root === undefined ? hostPath(container, path) : path;
}

/** True when the container path is an existing directory, as a process in the container would see it. */
export async function isDirectory(container: LocalContainer, path: string): Promise<boolean> {
  try {
    return (
      (await statPath(container.files, helperPath(container, path), true)).type === "directory"
    );
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

/** Starts `bash -c` for the spec in its own process group, with container paths mapped; stdin is at EOF. */
export function startCommand(container: LocalContainer, spec: CommandSpec): MappedProcess {
  const args =
    spec.snapshot === undefined
      ? ["-c", spec.command, "bash", ...(spec.args ?? [])]
      : ["-c", SNAPSHOT_SCRIPT, "bash", spec.snapshot, spec.command];
  const mapped = container.namespace.spawn({ command: "bash", args, cwd: spec.cwd, env: spec.env });
  // No route streams input to a command, so it reads end of file at once, as on the published container.
  mapped.child.stdin?.on("error", () => undefined);
  mapped.child.stdin?.end();
  return mapped;
}
