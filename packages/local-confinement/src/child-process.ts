import type { ChildProcess } from "node:child_process";
import type { MappedProcess, PathMappingMode } from "./types.js";
import type { SandboxProcessExit } from "@open-managed-agents/sandbox";

/**
 * Wraps a child spawned with `detached: true` (so it leads its own process group) as a
 * {@link MappedProcess}. `onSettled` runs once the process exited and its stdio closed.
 */
export function wrapChild(
  child: ChildProcess,
  mode: PathMappingMode,
  signal: AbortSignal | undefined,
  onSettled?: () => void,
): MappedProcess {
  const groupId = child.pid;
  let groupGone = groupId === undefined;
  const kill = (killSignal: NodeJS.Signals = "SIGTERM"): void => {
    if (groupGone || groupId === undefined) return;
    if (!leaderMayBeUnreaped(child) && pidInUse(groupId)) {
      // The leader was reaped and its pid now belongs to another process. The kernel keeps a pid
      // out of reuse while any process still has it as its group id, so the group is empty.
      groupGone = true;
      return;
    }
    try {
      process.kill(-groupId, killSignal);
    } catch {
      // ESRCH: no member is left; killing a gone group is success.
      groupGone = true;
    }
  };
  const onAbort = (): void => kill("SIGKILL");
  const exited = new Promise<SandboxProcessExit>((resolve) => {
    child.once("error", (error: NodeJS.ErrnoException) => {
      // spawn failed (e.g. ENOENT): report it like a shell would, with the reason on no stream.
      if (child.pid === undefined)
        resolve({ code: error.code === "ENOENT" ? 127 : 126, signal: null });
    });
    child.once("close", (code, closeSignal) => resolve({ code, signal: closeSignal }));
  }).finally(() => {
    signal?.removeEventListener("abort", onAbort);
    onSettled?.();
  });
  if (signal?.aborted) onAbort();
  else signal?.addEventListener("abort", onAbort, { once: true });
  return { child, pid: child.pid ?? null, mode, kill, exited };
}

/** Until Node reports the exit, the leader is alive or an unreaped zombie, and its pid is ours. */
function leaderMayBeUnreaped(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

function pidInUse(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
