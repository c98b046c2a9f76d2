import {
  type ManagedSandboxLease,
  type ManagedSandboxPort,
  type SandboxResourceCapabilities,
  UnsupportedOperationError,
} from "@open-managed-agents/runtime-resource-contract";

/** Options of {@link createFakeSandbox}. */
export interface FakeSandboxOptions {
  /** Provider id written into every lease. @default "fake" */
  readonly provider?: string;
  readonly capabilities?: SandboxResourceCapabilities;
}

/** What happened to one fake runtime. */
export interface FakeRuntime {
  readonly runtimeId: string;
  state: "running" | "suspended" | "stopped";
  /** How it was created. */
  readonly origin: "acquire" | "restore";
  terminateCalls: number;
  reapCalls: number;
}

/** An in-memory {@link ManagedSandboxPort} and its runtimes. */
export interface FakeSandbox {
  readonly port: ManagedSandboxPort;
  /** Provider id of every lease. */
  readonly provider: string;
  readonly runtimes: ReadonlyMap<string, FakeRuntime>;
  /** Starts a runtime as a restore would (with the given id, or the next one); used by the fake runtime-checkpoint port. */
  start(origin: "acquire" | "restore", runtimeId?: string): ManagedSandboxLease;
  /** The id the next runtime gets, reserved. */
  nextId(): string;
  /** Makes heartbeats of the runtime answer `lost`, as if the provider deleted it. */
  markLost(runtimeId: string): void;
}

/** Default capabilities of the fake sandbox. */
export const FAKE_SANDBOX_CAPABILITIES: SandboxResourceCapabilities = {
  suspendResume: "supported",
  hardTerminate: "supported",
  runtimeCheckpoints: [],
};

/**
 * An in-memory sandbox. Runtime ids are `<provider>-rt-<n>`; acquire journals the lease-to-be through the
 * host's binding before the runtime exists; terminate and reap are idempotent and mark
 * the runtime stopped; suspend keeps it (with `suspended: true` in lease metadata) when
 * `suspendResume` is `supported` and throws `unsupported_operation` otherwise.
 */
export function createFakeSandbox(options: FakeSandboxOptions = {}): FakeSandbox {
  const provider = options.provider ?? "fake";
  const capabilities = options.capabilities ?? FAKE_SANDBOX_CAPABILITIES;
  const runtimes = new Map<string, FakeRuntime>();
  const lost = new Set<string>();
  let count = 0;

  const nextId = (): string => {
    count += 1;
    return `${provider}-rt-${count}`;
  };
  const start = (origin: "acquire" | "restore", runtimeId = nextId()): ManagedSandboxLease => {
    runtimes.set(runtimeId, {
      runtimeId,
      state: "running",
      origin,
      terminateCalls: 0,
      reapCalls: 0,
    });
    return { provider, runtimeId };
  };
  const runtimeOf = (lease: ManagedSandboxLease) => runtimes.get(lease.runtimeId);

  const port: ManagedSandboxPort = {
    capabilities: async () => capabilities,
    async acquire({ journal }) {
      // Journals the lease-to-be first, as a real driver must; a failed journal write starts nothing.
      const runtimeId = nextId();
      await journal?.record({ provider, runtimeId });
      return start("acquire", runtimeId);
    },
    async heartbeat({ lease }) {
      const runtime = runtimeOf(lease);
      return !runtime || runtime.state === "stopped" || lost.has(lease.runtimeId)
        ? { type: "lost" }
        : { type: "alive" };
    },
    async suspend({ lease }) {
      if (capabilities.suspendResume !== "supported")
        throw new UnsupportedOperationError({ message: "the fake sandbox cannot suspend" });
      const runtime = runtimeOf(lease);
      if (runtime) runtime.state = "suspended";
      return { ...lease, metadata: { ...lease.metadata, suspended: true } };
    },
    async terminate({ lease }) {
      const runtime = runtimeOf(lease);
      if (!runtime) return;
      runtime.terminateCalls += 1;
      runtime.state = "stopped";
    },
    async reap({ lease }) {
      const runtime = runtimeOf(lease);
      if (!runtime) return;
      runtime.reapCalls += 1;
      runtime.state = "stopped";
    },
    async inspect(lease) {
      return { state: runtimeOf(lease)?.state ?? "unknown" };
    },
  };
  return {
    port,
    provider,
    runtimes,
    start,
    nextId,
    markLost: (runtimeId) => void lost.add(runtimeId),
  };
}
