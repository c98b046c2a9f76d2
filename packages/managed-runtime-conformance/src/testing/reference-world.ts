import { InvalidConfigError } from "@open-managed-agents/runtime-resource-contract";
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type ManagedSandboxLease,
  ProviderMismatchError,
  parseManagedSandboxLease,
} from "@open-managed-agents/runtime-resource-contract";
import type { ManagedSandboxRuntime, SandboxFactoryContext } from "@open-managed-agents/sandbox";
import {
  type LocalSubprocessSandboxProvider,
  createLocalSubprocessSandboxProvider,
} from "@open-managed-agents/local-confinement/local-subprocess";
import type { ResolvedReferenceDriverOptions } from "./reference-options.js";

/**
 * What the reference driver's "cloud" holds: runtimes (host directories with local processes), and a
 * content-addressed blob store for output manifests. One world per driver instance; every `create` call
 * shares it, the way separate processes share a real provider.
 */
export interface ReferenceWorld {
  readonly options: ResolvedReferenceDriverOptions;
  readonly provider: LocalSubprocessSandboxProvider;
  /** Stored output blobs and manifests by key. */
  readonly blobs: Map<string, Uint8Array>;
  /** Starts a fresh runtime, decorated. */
  createRuntime(sessionId: string): Promise<ManagedSandboxRuntime>;
  /** Reconnects to a runtime by lease, checking the lease names this provider. Never needs in-process state. */
  connect(lease: ManagedSandboxLease): Promise<ManagedSandboxRuntime>;
  /** Restores a portable filesystem checkpoint into a new runtime. */
  restore(
    checkpointId: string,
    sourceRuntimeId: string,
    sessionId: string,
  ): Promise<ManagedSandboxRuntime>;
  /** Host directory behind `/mnt/memory` of a session's runtimes. */
  memoryDir(sessionId: string): string;
  /** The lease of a runtime: provider and runtime id only. */
  leaseOf(
    runtime: ManagedSandboxRuntime,
    metadata?: ManagedSandboxLease["metadata"],
  ): ManagedSandboxLease;
}

const WORKDIR = "/workspace";

/**
 * Creates the world. Refused unless `NODE_ENV` is `test`: the reference driver's ports are in-memory
 * stand-ins (and can simulate enforced egress), so it must not be reachable from a production configuration.
 */
export function createReferenceWorld(options: ResolvedReferenceDriverOptions): ReferenceWorld {
  if (process.env.NODE_ENV !== "test") {
    throw new InvalidConfigError({
      message:
        "the conformance reference driver is a test fixture; it loads only when NODE_ENV=test",
      context: { field: "NODE_ENV", nodeEnv: process.env.NODE_ENV ?? null },
    });
  }
  const rootDir = options.rootDir ?? mkdtempSync(join(tmpdir(), "openma-conformance-reference-"));
  const provider = createLocalSubprocessSandboxProvider({ rootDir });
  const sessionsByRuntime = new Map<string, string>();
  const memoryDir = (sessionId: string): string =>
    join(rootDir, "memory", sessionId.replace(/[^A-Za-z0-9._-]/g, "_"));
  // Only with the memory-store claim does /mnt/memory map to a host directory.
  const context = (sessionId: string): SandboxFactoryContext => {
    if (!options.memoryStores) return { sessionId, workdir: WORKDIR };
    mkdirSync(memoryDir(sessionId), { recursive: true });
    return { sessionId, workdir: WORKDIR, memoryRoot: memoryDir(sessionId) };
  };
  return {
    options,
    provider,
    blobs: new Map(),
    memoryDir,
    async createRuntime(sessionId) {
      const runtime = await provider.create(context(sessionId));
      sessionsByRuntime.set(runtime.runtimeHandle().runtimeId, sessionId);
      return options.decorateRuntime(runtime);
    },
    async connect(rawLease) {
      const lease = parseManagedSandboxLease(rawLease);
      if (lease.provider !== options.provider) {
        throw new ProviderMismatchError({
          message: `lease belongs to provider ${lease.provider}, not ${options.provider}`,
          context: { expected: options.provider, actual: lease.provider },
        });
      }
      // A reconnected runtime keeps its session's /mnt/memory.
      return options.decorateRuntime(
        await provider.connect(
          lease.runtimeId,
          context(sessionsByRuntime.get(lease.runtimeId) ?? "reconnect"),
        ),
      );
    },
    async restore(checkpointId, sourceRuntimeId, sessionId) {
      const handle = {
        provider: provider.provider,
        checkpointId,
        sourceRuntimeId,
        kind: "filesystem",
        scope: "portable",
      } as const;
      const runtime = await provider.restore(handle, context(sessionId));
      sessionsByRuntime.set(runtime.runtimeHandle().runtimeId, sessionId);
      return options.decorateRuntime(runtime);
    },
    leaseOf(runtime, metadata) {
      const { runtimeId } = runtime.runtimeHandle();
      return metadata
        ? { provider: options.provider, runtimeId, metadata }
        : { provider: options.provider, runtimeId };
    },
  };
}
