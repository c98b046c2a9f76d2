import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import type { SandboxDuplexProcess, SandboxProcessExit } from "@open-managed-agents/sandbox";

/**
 * Closes a process's stdin. Some providers cannot carry stdin at all (their stdin throws); the processes
 * run here never read it, so a failure to send end-of-file is not an error.
 */
export async function closeStdin(process: SandboxDuplexProcess): Promise<void> {
  try {
    await process.stdin.close();
  } catch {
    // Intentionally ignored: see above.
  }
}

/** Grace period between SIGTERM and SIGKILL when a process is stopped. */
export const KILL_GRACE_MS = 5_000;

/** Stops a process: SIGTERM, then SIGKILL after the grace period; resolves once it exited or the wait gave up. */
export async function stopProcess(
  process: SandboxDuplexProcess,
  graceMs: number = KILL_GRACE_MS,
): Promise<SandboxProcessExit | null> {
  process.kill("SIGTERM");
  const afterTerm = await waitFor(process.exited, graceMs);
  if (afterTerm) return afterTerm;
  process.kill("SIGKILL");
  return waitFor(process.exited, graceMs);
}

/**
 * Stops a process whose run ended through `signal`, unless the run lost its lease: its sandbox is terminated
 * next, which ends every process in it, and may already have been reaped by another worker once the fence
 * expired. A provider that starts a container for any call on a sandbox id (Cloudflare's bridge and
 * Sandbox Durable Object) would start one for the kill, and calls racing on an id without a container can
 * leave one running that no delete reaches.
 */
export async function stopProcessUnlessLeaseLost(
  process: SandboxDuplexProcess,
  signal: AbortSignal,
  graceMs: number = KILL_GRACE_MS,
): Promise<SandboxProcessExit | null> {
  if (signal.aborted && ManagedRuntimeError.hasCode(signal.reason, "lease_lost")) return null;
  return stopProcess(process, graceMs);
}

async function waitFor<T>(promise: Promise<T>, ms: number): Promise<T | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs `onAbort` once when the signal fires; returns a function that detaches the listener. */
export function onAbort(signal: AbortSignal, onAbortCallback: () => void): () => void {
  if (signal.aborted) {
    onAbortCallback();
    return () => undefined;
  }
  signal.addEventListener("abort", onAbortCallback, { once: true });
  return () => signal.removeEventListener("abort", onAbortCallback);
}
