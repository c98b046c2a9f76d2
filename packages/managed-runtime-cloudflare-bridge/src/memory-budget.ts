import { AbortedError, InvalidConfigError } from "@open-managed-agents/runtime-resource-contract";

const MIB = 1024 * 1024;

/** Bytes the process-wide budget admits at once: four default parts (8 MiB) in flight. */
export const DEFAULT_MEMORY_BUDGET_BYTES = 32 * MIB;

/** Bytes held from a {@link MemoryBudget} until released. */
export interface MemoryLease {
  /** Bytes this lease counts against the budget (the request, capped at the budget's size). */
  readonly bytes: number;
  /** Gives the bytes back. Idempotent. */
  release(): void;
}

/**
 * One byte budget for the archive bytes a driver holds in memory (restore parts and whole small archives
 * read from a spool before their request goes out), shared by every run of the process, so N concurrent
 * runs hold at most `maxBytes` between them instead of N times a part.
 */
export interface MemoryBudget {
  /** Bytes admitted at once. */
  readonly maxBytes: number;
  /** Bytes held now. */
  readonly heldBytes: number;
  /** The most bytes held at once so far. */
  readonly peakBytes: number;
  /** Callers waiting for bytes. */
  readonly waiting: number;
  /**
   * Waits, first come first served, until `bytes` fit, then holds them. A request larger than the budget is
   * held as the whole budget (it runs alone). Rejects with `aborted` when the signal fires while waiting.
   */
  acquire(bytes: number, signal?: AbortSignal): Promise<MemoryLease>;
  /** Runs `task` while holding `bytes`, releasing them however it ends. */
  use<T>(bytes: number, task: () => Promise<T>, signal?: AbortSignal): Promise<T>;
}

interface Waiter {
  readonly bytes: number;
  readonly grant: () => void;
}

/** Creates a {@link MemoryBudget} of `maxBytes`. */
export function createMemoryBudget(options: { readonly maxBytes: number }): MemoryBudget {
  const { maxBytes } = options;
  if (!Number.isSafeInteger(maxBytes) || maxBytes <= 0) {
    throw new InvalidConfigError({
      message: "memory budget maxBytes must be a positive safe integer",
      context: { field: "maxBytes" },
    });
  }
  let held = 0;
  let peak = 0;
  const queue: Waiter[] = [];

  // Strict order: a large request at the head is not overtaken by smaller ones behind it.
  const grantWaiting = (): void => {
    while (queue.length > 0 && held + (queue[0] as Waiter).bytes <= maxBytes)
      (queue.shift() as Waiter).grant();
  };

  const take = (bytes: number): MemoryLease => {
    held += bytes;
    peak = Math.max(peak, held);
    let released = false;
    return {
      bytes,
      release() {
        if (released) return;
        released = true;
        held -= bytes;
        grantWaiting();
      },
    };
  };

  const budget: MemoryBudget = {
    maxBytes,
    get heldBytes() {
      return held;
    },
    get peakBytes() {
      return peak;
    },
    get waiting() {
      return queue.length;
    },
    acquire(requested, signal) {
      const bytes = Math.min(maxBytes, Math.max(0, Math.ceil(requested)));
      if (signal?.aborted)
        return Promise.reject(
          new AbortedError({
            message: "waiting for transfer memory aborted",
            cause: signal.reason,
          }),
        );
      if (queue.length === 0 && held + bytes <= maxBytes) return Promise.resolve(take(bytes));
      return new Promise<MemoryLease>((resolve, reject) => {
        const onAbort = (): void => {
          const index = queue.indexOf(waiter);
          if (index >= 0) queue.splice(index, 1);
          grantWaiting();
          reject(
            new AbortedError({
              message: "waiting for transfer memory aborted",
              cause: signal?.reason,
            }),
          );
        };
        const waiter: Waiter = {
          bytes,
          grant: () => {
            signal?.removeEventListener("abort", onAbort);
            resolve(take(bytes));
          },
        };
        queue.push(waiter);
        signal?.addEventListener("abort", onAbort, { once: true });
      });
    },
    async use(bytes, task, signal) {
      const lease = await budget.acquire(bytes, signal);
      try {
        return await task();
      } finally {
        lease.release();
      }
    },
  };
  return budget;
}

let shared: MemoryBudget | undefined;

/** The budget every driver of this process uses unless given its own. */
export function processMemoryBudget(): MemoryBudget {
  shared ??= createMemoryBudget({ maxBytes: DEFAULT_MEMORY_BUDGET_BYTES });
  return shared;
}
