import type { BlobStore } from "@open-managed-agents/blob-store";

interface SessionState {
  checkpoints: number;
  sweep: Promise<void> | null;
  /** Bumped by every sweep: hashes remembered before it may have been collected. */
  generation: number;
  idle: Array<() => void>;
}

// Shared by every checkpointer and sweep of this process that uses the same store object, so that a sweep
// never runs while a checkpoint of the session does and a checkpoint waits for a running sweep.
const states = new WeakMap<BlobStore, Map<string, SessionState>>();

function stateOf(store: BlobStore, key: string): SessionState {
  let byKey = states.get(store);
  if (!byKey) states.set(store, (byKey = new Map()));
  let state = byKey.get(key);
  if (!state) byKey.set(key, (state = { checkpoints: 0, sweep: null, generation: 0, idle: [] }));
  return state;
}

/** The session's sweep generation; a change means remembered hashes must be checked again. */
export function sweepGeneration(store: BlobStore, key: string): number {
  return stateOf(store, key).generation;
}

/** Runs a checkpoint of the session once no sweep of it runs; sweeps wait for it. */
export async function withCheckpointLock<T>(
  store: BlobStore,
  key: string,
  run: () => Promise<T>,
): Promise<T> {
  const state = stateOf(store, key);
  while (state.sweep) await state.sweep.catch(() => undefined);
  state.checkpoints += 1;
  try {
    return await run();
  } finally {
    state.checkpoints -= 1;
    if (state.checkpoints === 0) for (const wake of state.idle.splice(0)) wake();
  }
}

/** Runs a sweep of the session once no checkpoint of it runs; checkpoints started meanwhile wait for it. */
export async function withSweepLock<T>(
  store: BlobStore,
  key: string,
  run: () => Promise<T>,
): Promise<T> {
  const state = stateOf(store, key);
  while (state.sweep) await state.sweep.catch(() => undefined);
  let release = () => {};
  state.sweep = new Promise<void>((resolve) => (release = resolve));
  try {
    while (state.checkpoints > 0) await new Promise<void>((resolve) => state.idle.push(resolve));
    return await run();
  } finally {
    state.generation += 1;
    state.sweep = null;
    release();
  }
}
