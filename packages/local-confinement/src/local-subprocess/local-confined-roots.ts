import { type ConfinedRoot, createConfinedRoot } from "../confined-root.js";
import type { PathMounts } from "../types.js";

/**
 * The confinement of each live local-subprocess runtime, by runtime directory. A runtime object is
 * rebuilt by `connect`, so the confinement lives here rather than in the object: every object of one
 * runtime runs its commands in the same one. Holders die with this process (bubblewrap's
 * `--die-with-parent`), so nothing outlives it.
 */
const roots = new Map<string, Promise<ConfinedRoot>>();

/** The runtime's confinement, started on first use. A failed start is forgotten, so the next call tries again. */
export function confinedRootFor(runtimeDir: string, mounts: PathMounts): Promise<ConfinedRoot> {
  let root = roots.get(runtimeDir);
  if (root === undefined) {
    root = createConfinedRoot({ tree: runtimeDir, mounts });
    roots.set(runtimeDir, root);
    root.catch(() => {
      if (roots.get(runtimeDir) === root) roots.delete(runtimeDir);
    });
  }
  return root;
}

/** Ends the runtime's confinement, if it has one, and waits until its processes are gone. */
export async function releaseConfinedRoot(runtimeDir: string): Promise<void> {
  const root = roots.get(runtimeDir);
  if (root === undefined) return;
  roots.delete(runtimeDir);
  const started = await root.catch(() => undefined);
  if (started === undefined) return;
  started.dispose();
  await started.ended;
}
