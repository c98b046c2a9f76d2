import type { SandboxDuplexProcess, SandboxProcessExit } from "@open-managed-agents/sandbox";

/** Bytes of process output kept for an error message. */
export const OUTPUT_TAIL_BYTES = 4_096;

/** Keeps only the last bytes of a byte stream; memory stays bounded however much a process prints. */
export interface ByteTail {
  push(chunk: Uint8Array): void;
  /** The kept bytes as text; invalid UTF-8 becomes U+FFFD. */
  text(): string;
}

/** Creates a {@link ByteTail} of `limit` bytes. */
export function createByteTail(limit: number = OUTPUT_TAIL_BYTES): ByteTail {
  let kept = new Uint8Array(0);
  return {
    push(chunk) {
      if (chunk.byteLength >= limit) {
        kept = chunk.slice(chunk.byteLength - limit);
        return;
      }
      const keepOld = Math.min(kept.byteLength, limit - chunk.byteLength);
      const next = new Uint8Array(keepOld + chunk.byteLength);
      next.set(kept.subarray(kept.byteLength - keepOld), 0);
      next.set(chunk, keepOld);
      kept = next;
    },
    text: () => new TextDecoder().decode(kept),
  };
}

/** Reads a stream to its end, handing each chunk to `onChunk`; a throwing `onChunk` cancels the stream. */
export async function drainStream(stream: ReadableStream<Uint8Array>, onChunk: (chunk: Uint8Array) => void): Promise<void> {
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      onChunk(value);
    }
  } catch (error) {
    await reader.cancel(error).catch(() => undefined);
    throw error;
  } finally {
    reader.releaseLock();
  }
}

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
export async function stopProcess(process: SandboxDuplexProcess, graceMs: number = KILL_GRACE_MS): Promise<SandboxProcessExit | null> {
  process.kill("SIGTERM");
  const afterTerm = await waitFor(process.exited, graceMs);
  if (afterTerm) return afterTerm;
  process.kill("SIGKILL");
  return waitFor(process.exited, graceMs);
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
