/** A counting limit on items run at once. */
export interface Slots {
  /** Takes a slot now; callers check {@link Slots.free} or await {@link Slots.whenFree} first. */
  take(): () => void;
  /** Takes a slot if one is free (checked and taken at once), else null. */
  tryTake(): (() => void) | null;
  free(): boolean;
  /** Resolves once a slot is free, or when `signal` aborts. */
  whenFree(signal: AbortSignal): Promise<void>;
}

/** Creates {@link Slots} of the given size. */
export function createSlots(size: number): Slots {
  let used = 0;
  const waiters = new Set<() => void>();
  const slots: Slots = {
    tryTake: () => (used < size ? slots.take() : null),
    take() {
      used += 1;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        used -= 1;
        for (const wake of waiters) wake();
      };
    },
    free: () => size > used,
    whenFree(signal) {
      return new Promise<void>((resolve) => {
        const check = () => {
          if (used >= size && !signal.aborted) return;
          waiters.delete(check);
          signal.removeEventListener("abort", check);
          resolve();
        };
        waiters.add(check);
        signal.addEventListener("abort", check, { once: true });
        check();
      });
    },
  };
  return slots;
}
