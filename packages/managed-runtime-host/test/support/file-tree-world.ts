import {
  type HarnessRunInput,
  type ManagedSandboxLease,
  type ManagedSandboxPort,
  type ManagedWorkExecutionResult,
  NotFoundError,
  type SandboxHarnessDriverPort,
  UnsupportedOperationError,
  type WorkspacePersistencePort,
} from "@open-managed-agents/runtime-resource-contract";
import { FAKE_SANDBOX_CAPABILITIES } from "../../src/testing/fake-sandbox.js";

/** A sandbox's `/workspace`: relative path to content. */
export type FileTree = ReadonlyMap<string, string>;

interface TreeRuntime {
  readonly files: Map<string, string>;
  state: "running" | "stopped";
  /** The in-sandbox worker is still running (ended by `endAbandoned` or the end of its turn). */
  harness: boolean;
}

/** What one turn's worker does in its sandbox; `seen` receives the tree it found on start. */
export interface TurnScript {
  /** Files written before the turn goes on without its host (or finishes). */
  readonly writes: Readonly<Record<string, string>>;
  /** The worker goes on after this, as the AMA worker does when its host dies: the run never returns. */
  readonly hangs?: boolean;
}

/**
 * Stands in for a driver whose sandboxes hold real trees of files: the sandbox port starts runtimes
 * (journaling each first), the workspace port checkpoints a runtime's tree into an in-memory store and
 * restores one into a new runtime on attach, and the harness port runs scripted turns keyed by work id and
 * ends an abandoned worker (`endAbandoned`), after which it writes nothing more.
 */
export function createFileTreeWorld() {
  const runtimes = new Map<string, TreeRuntime>();
  const checkpoints = new Map<string, FileTree>();
  const scripts = new Map<string, TurnScript>();
  const seen = new Map<string, string[]>();
  const written = new Map<string, () => void>();
  let count = 0;

  const runtimeOf = (lease: ManagedSandboxLease): TreeRuntime => {
    const runtime = runtimes.get(lease.runtimeId);
    if (!runtime || runtime.state === "stopped")
      throw new NotFoundError({ message: `runtime ${lease.runtimeId} is gone` });
    return runtime;
  };

  const sandbox: ManagedSandboxPort = {
    capabilities: async () => FAKE_SANDBOX_CAPABILITIES,
    async acquire({ journal }) {
      count += 1;
      const lease = { provider: "tree", runtimeId: `tree-rt-${count}` };
      await journal?.record(lease);
      runtimes.set(lease.runtimeId, { files: new Map(), state: "running", harness: false });
      return lease;
    },
    heartbeat: async ({ lease }) =>
      runtimes.get(lease.runtimeId)?.state === "running" ? { type: "alive" } : { type: "lost" },
    async suspend() {
      throw new UnsupportedOperationError({ message: "the tree world cannot suspend" });
    },
    async terminate({ lease }) {
      stop(lease);
    },
    async reap({ lease }) {
      stop(lease);
    },
    inspect: async (lease) => ({ state: runtimes.get(lease.runtimeId)?.state ?? "unknown" }),
  };
  const stop = (lease: ManagedSandboxLease) => {
    const runtime = runtimes.get(lease.runtimeId);
    if (!runtime) return;
    runtime.state = "stopped";
    runtime.harness = false;
    runtime.files.clear();
  };

  const workspace: WorkspacePersistencePort = {
    capabilities: async () => ({ strategies: ["checkpoint_restore"] }),
    materialize: async ({ scope, fence, activeCheckpoint }) => {
      if (activeCheckpoint && !checkpoints.has(activeCheckpoint.id))
        throw new NotFoundError({ message: `checkpoint ${activeCheckpoint.id} is unknown` });
      return {
        bindingId: `ws-${scope.workId}-${fence.generation}`,
        mountPath: "/workspace",
        metadata: { restores: activeCheckpoint?.id ?? "" },
      };
    },
    async attach({ binding, sandbox: lease }) {
      const runtime = runtimeOf(lease);
      const restores = binding.metadata?.restores;
      for (const [path, content] of checkpoints.get(String(restores)) ?? [])
        runtime.files.set(path, content);
    },
    async checkpoint({ sandbox: lease, fence }) {
      const tree = new Map(runtimeOf(lease).files);
      const id = `wcp-${checkpoints.size + 1}`;
      checkpoints.set(id, tree);
      return {
        id,
        contentHash: `sha256:${[...tree.keys()].sort().join(",")}`,
        revision: fence.generation,
      };
    },
    release: async () => undefined,
  };

  const harnessDriver: SandboxHarnessDriverPort = {
    driverCapabilities: async () => ({ drivers: ["ama_worker"] }),
    async run(input: HarnessRunInput): Promise<ManagedWorkExecutionResult> {
      const runtime = runtimeOf(input.sandbox);
      seen.set(input.scope.workId, [...runtime.files.keys()].sort());
      const script = scripts.get(input.scope.workId) ?? { writes: {} };
      runtime.harness = true;
      for (const [path, content] of Object.entries(script.writes)) runtime.files.set(path, content);
      written.get(input.scope.workId)?.();
      // The worker goes on without its host: the run never returns, and the host that waits on it is dead.
      if (script.hangs) return new Promise<never>(() => undefined);
      runtime.harness = false;
      return { type: "completed" };
    },
    async endAbandoned({ sandbox: lease }) {
      runtimeOf(lease).harness = false;
    },
  };

  return {
    runtimes,
    checkpoints,
    sandbox,
    workspace,
    harnessDriver,
    /** The same driver without `endAbandoned`: a host that cannot salvage. */
    harnessDriverWithoutSalvage: {
      driverCapabilities: harnessDriver.driverCapabilities,
      run: harnessDriver.run,
    } satisfies SandboxHarnessDriverPort,
    /** Scripts the turn of `workId`; resolves once its files are written. */
    script(workId: string, script: TurnScript): Promise<void> {
      scripts.set(workId, script);
      return new Promise((resolve) => written.set(workId, resolve));
    },
    /** Writes into a runtime as its worker finishing the turn would, unless the worker was ended. */
    workerWrites(runtimeId: string, path: string, content: string): boolean {
      const runtime = runtimes.get(runtimeId);
      if (!runtime?.harness) return false;
      runtime.files.set(path, content);
      return true;
    },
    /** The tree a turn found in `/workspace` when its worker started. */
    seenBy: (workId: string) => seen.get(workId),
    /** The files of a checkpoint. */
    filesOf: (checkpointId: string) => [...(checkpoints.get(checkpointId)?.keys() ?? [])].sort(),
  };
}
