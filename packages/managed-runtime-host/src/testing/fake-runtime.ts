import type {
  CredentialEgressCapabilities,
  ManagedRuntimeProviderDriverDescriptor,
  ManagedRuntimeProviderDriverPort,
  ManagedRuntimeProviderPlacement,
  ManagedRuntimeProviderResources,
  RuntimeOrphanPort,
  RuntimeResourceFencePort,
  SandboxJournalPort,
  SandboxResourceCapabilities,
  WorkspaceStrategy,
} from "@open-managed-agents/runtime-resource-contract";
import {
  createMemoryFencePort,
  createMemoryOrphanPort,
  createMemorySandboxJournal,
} from "../stores/index.js";
import type { Clock } from "../time.js";
import {
  FAKE_EGRESS_CAPABILITIES,
  createFakeCredentialEgressPort,
  createFakeRuntimeCheckpointPort,
  createFakeSessionInputPort,
} from "./fake-optional-ports.js";
import { type ScriptedHarnessOptions, createScriptedHarnessDriver } from "./fake-harness.js";
import { FAKE_SANDBOX_CAPABILITIES, type FakeSandbox, createFakeSandbox } from "./fake-sandbox.js";
import {
  type FakeOutputPortOptions,
  createFakeOutputPort,
  createFakeWorkspacePort,
} from "./fake-storage-ports.js";
import { type FaultPlan, createFaultPlan } from "./faults.js";
import { instrumentPort } from "./instrument.js";
import { type CallJournal, createCallJournal } from "./journal.js";

/** Options of {@link createFakeManagedRuntime}. */
export interface FakeManagedRuntimeOptions {
  /** @default "fake" */
  readonly provider?: string;
  readonly sandboxCapabilities?: SandboxResourceCapabilities;
  /** @default ["checkpoint_restore"] */
  readonly workspaceStrategies?: readonly WorkspaceStrategy[];
  readonly outputs?: FakeOutputPortOptions;
  /** Capabilities of the egress port; `null` leaves the port out. @default enforced, live, http + https */
  readonly credentialEgress?: CredentialEgressCapabilities | null;
  /** Include a runtime-checkpoint port. @default false */
  readonly runtimeCheckpoint?: boolean;
  /** Include a session-input materializer. @default false */
  readonly sessionInputs?: boolean;
  readonly harness?: ScriptedHarnessOptions;
  /** Shared with other instrumented ports to get one ordered record. */
  readonly journal?: CallJournal;
  readonly faults?: FaultPlan;
}

/** Instrumented in-memory provider resources plus everything a test inspects. */
export interface FakeManagedRuntime {
  /** Ports named as in {@link ManagedRuntimeProviderResources}; journal entries use the same names. */
  readonly resources: ManagedRuntimeProviderResources;
  readonly sandbox: FakeSandbox;
  readonly journal: CallJournal;
  readonly faults: FaultPlan;
}

/** Creates instrumented in-memory provider resources. */
export function createFakeManagedRuntime(
  options: FakeManagedRuntimeOptions = {},
): FakeManagedRuntime {
  const journal = options.journal ?? createCallJournal();
  const faults =
    options.faults ??
    createFaultPlan(options.harness?.scheduler ? { scheduler: options.harness.scheduler } : {});
  const sandbox = createFakeSandbox({
    ...(options.provider ? { provider: options.provider } : {}),
    ...(options.sandboxCapabilities ? { capabilities: options.sandboxCapabilities } : {}),
  });
  const wrap = <T extends object>(name: string, port: T) =>
    instrumentPort(name, port, { journal, faults });
  const egress =
    options.credentialEgress === undefined ? FAKE_EGRESS_CAPABILITIES : options.credentialEgress;
  const resources: ManagedRuntimeProviderResources = {
    sandbox: wrap("sandbox", sandbox.port),
    workspace: wrap(
      "workspace",
      createFakeWorkspacePort(
        options.workspaceStrategies ? { strategies: options.workspaceStrategies } : {},
      ),
    ),
    outputs: wrap("outputs", createFakeOutputPort(options.outputs)),
    harnessDriver: wrap("harnessDriver", createScriptedHarnessDriver(options.harness)),
    ...(egress
      ? { credentialEgress: wrap("credentialEgress", createFakeCredentialEgressPort(egress)) }
      : {}),
    ...(options.runtimeCheckpoint
      ? { runtimeCheckpoint: wrap("runtimeCheckpoint", createFakeRuntimeCheckpointPort(sandbox)) }
      : {}),
    ...(options.sessionInputs
      ? { sessionInputs: wrap("sessionInputs", createFakeSessionInputPort()) }
      : {}),
  };
  return { resources, sandbox, journal, faults };
}

/** Everything {@link createManagedRuntimeHost} needs besides owner and timing, all instrumented. */
export interface FakeHostDependencies extends FakeManagedRuntime {
  /** Spread into the host options: fences, orphans, the sandbox journal and the provider ports. */
  readonly ports: ManagedRuntimeProviderResources & {
    readonly fences: RuntimeResourceFencePort;
    readonly orphans: RuntimeOrphanPort;
    readonly journal: SandboxJournalPort;
  };
  /** The sandbox journal (not instrumented, so call records stay as they were), for assertions. */
  readonly sandboxJournal: SandboxJournalPort;
  /** The orphan store itself (not instrumented), for assertions. */
  readonly orphanStore: RuntimeOrphanPort;
  /** The fence store itself (not instrumented), for assertions that must not show up in the journal. */
  readonly fenceStore: RuntimeResourceFencePort;
}

/**
 * A fake runtime plus instrumented memory fence and orphan stores (journal names `fences`, `orphans`) and
 * a memory sandbox journal.
 * Pass `fences` to share one store between several hosts.
 */
export function createFakeHostDependencies(
  options: FakeManagedRuntimeOptions & {
    readonly clock?: Clock;
    readonly fences?: RuntimeResourceFencePort;
  } = {},
): FakeHostDependencies {
  const runtime = createFakeManagedRuntime(options);
  const clockOptions = options.clock ? { clock: options.clock } : {};
  const orphanStore = createMemoryOrphanPort(clockOptions);
  const fenceStore = options.fences ?? createMemoryFencePort(clockOptions);
  const sandboxJournal = createMemorySandboxJournal(clockOptions);
  const wrap = <T extends object>(name: string, port: T) =>
    instrumentPort(name, port, { journal: runtime.journal, faults: runtime.faults });
  return {
    ...runtime,
    orphanStore,
    fenceStore,
    sandboxJournal,
    ports: {
      ...runtime.resources,
      fences: wrap("fences", fenceStore),
      orphans: wrap("orphans", orphanStore),
      journal: sandboxJournal,
    },
  };
}

/** Options of {@link createFakeProviderDriver}. */
export interface FakeProviderDriverOptions extends FakeManagedRuntimeOptions {
  /** @default ["in_process"] */
  readonly placements?: readonly ManagedRuntimeProviderPlacement[];
  /** Replaces fields of the descriptor derived from the fake's ports (to simulate drift). */
  readonly descriptor?: Partial<ManagedRuntimeProviderDriverDescriptor>;
  /** Replaces fields of the created resources (to drop or swap ports). */
  readonly resources?: Partial<Record<keyof ManagedRuntimeProviderResources, unknown>>;
}

/** A driver whose descriptor advertises exactly what its fake ports do, unless overridden. */
export function createFakeProviderDriver(
  options: FakeProviderDriverOptions = {},
): ManagedRuntimeProviderDriverPort & { readonly created: FakeManagedRuntime[] } {
  const created: FakeManagedRuntime[] = [];
  const egress =
    options.credentialEgress === undefined ? FAKE_EGRESS_CAPABILITIES : options.credentialEgress;
  const descriptor: ManagedRuntimeProviderDriverDescriptor = {
    specificationVersion: "v1",
    provider: options.provider ?? "fake",
    version: "1.0.0",
    placements: options.placements ?? ["in_process"],
    capabilities: {
      sandbox: options.sandboxCapabilities ?? FAKE_SANDBOX_CAPABILITIES,
      workspace: { strategies: options.workspaceStrategies ?? ["checkpoint_restore"] },
      outputs: {
        strategies: options.outputs?.strategies ?? [
          { strategy: "final_collect", durability: "durable" },
        ],
      },
      harness: { drivers: options.harness?.lanes ?? ["ama_worker", "openma_supervised"] },
    },
    credentialEgress: egress ?? {
      enforcement: "unsupported",
      credentialMode: "snapshot",
      interceptedProtocols: [],
    },
    ...options.descriptor,
  };
  return {
    created,
    descriptor: () => descriptor,
    async create() {
      const runtime = createFakeManagedRuntime(options);
      created.push(runtime);
      return { ...runtime.resources, ...options.resources } as ManagedRuntimeProviderResources;
    },
  };
}
