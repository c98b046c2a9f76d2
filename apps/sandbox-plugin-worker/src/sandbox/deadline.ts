import { TimeoutError } from "@open-managed-agents/runtime-resource-contract";

/** Resolves with `work`, or rejects with `timeout` after `ms`; a late result of `work` is dropped. */
export async function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError({ message: `did not finish within ${ms} ms`, context: { timeoutMs: ms } })), ms);
  });
  work.catch(() => undefined);
  try {
    return await Promise.race([work, deadline]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}
