import type {
  OutputStrategyCapability,
  SessionOutputEntryCandidate,
  SessionOutputPort,
  WorkspacePersistencePort,
  WorkspaceStrategy,
} from "@open-managed-agents/runtime-resource-contract";

/** A workspace port whose bindings and candidates are derived from work id and generation. */
export function createFakeWorkspacePort(
  options: { readonly strategies?: readonly WorkspaceStrategy[] } = {},
): WorkspacePersistencePort {
  const strategies = options.strategies ?? ["checkpoint_restore"];
  let checkpoints = 0;
  return {
    capabilities: async () => ({ strategies }),
    materialize: async ({ scope, fence }) => ({
      bindingId: `ws-${scope.workId}-${fence.generation}`,
      mountPath: "/workspace",
    }),
    attach: async () => undefined,
    async checkpoint({ fence }) {
      checkpoints += 1;
      return {
        id: `wck-${fence.generation}-${checkpoints}`,
        contentHash: `sha256:${digitsOf(checkpoints)}`,
        revision: fence.generation,
      };
    },
    release: async () => undefined,
  };
}

/** Options of {@link createFakeOutputPort}. */
export interface FakeOutputPortOptions {
  readonly strategies?: readonly OutputStrategyCapability[];
  /** What `collect` returns. @default one 5-byte `report.txt` */
  readonly entries?: readonly SessionOutputEntryCandidate[];
}

/** An output port that "collects" a fixed entry list and stores a manifest per finalize. */
export function createFakeOutputPort(options: FakeOutputPortOptions = {}): SessionOutputPort {
  const strategies = options.strategies ?? [{ strategy: "final_collect", durability: "durable" }];
  const entries = options.entries ?? [
    { logicalPath: "report.txt", contentHash: `sha256:${digitsOf(7)}`, size: 5 },
  ];
  let manifests = 0;
  return {
    capabilities: async () => ({ strategies }),
    prepare: async ({ scope, fence }) => ({
      bindingId: `out-${scope.workId}-${fence.generation}`,
      mountPath: "/mnt/session/outputs",
    }),
    attach: async () => undefined,
    collect: async () => entries,
    async finalize({ entries: collected }) {
      manifests += 1;
      return {
        id: `out-manifest-${manifests}`,
        contentHash: `sha256:${digitsOf(1000 + manifests)}`,
        entries: collected.length,
      };
    },
    release: async () => undefined,
    abort: async () => undefined,
  };
}

/** A 64-hex-digit string derived from a number; stands in for a content hash. */
function digitsOf(value: number): string {
  return value.toString(16).padStart(64, "0");
}
