import { randomUUID } from "node:crypto";
import {
  type ManagedRuntimeRunInput,
  type ManagedRuntimeRunResult,
  createManagedRuntimeHost,
  createManagedRuntimeProviderRegistry,
  createMemoryFencePort,
  createMemoryOrphanPort,
} from "@open-managed-agents/managed-runtime-host";
import type {
  ManagedRuntimePlan,
  ManagedRuntimeProfile,
  ManagedRuntimeProviderDriverPort,
  ManagedRuntimeProviderResources,
  RuntimeOrphanPort,
  RuntimeResourceFencePort,
  RuntimeResourcePublication,
  RuntimeResourceScope,
} from "@open-managed-agents/runtime-resource-contract";
import { type ProfileOverrides, buildProfile } from "./profiles.js";
import type { ConformanceScript } from "./harness-scripts.js";
import {
  type HarnessProbe,
  type RunObservations,
  createObservations,
  observeResources,
  recordingLogger,
} from "./observe.js";
import type { ConformanceSubject } from "./subject.js";

/** What `prepare` returns: the registry's admitted plan and live ports. */
export interface PreparedResources {
  readonly plan: ManagedRuntimePlan;
  readonly resources: ManagedRuntimeProviderResources;
}

/** Options of one host run. */
export interface CaseRunOptions {
  readonly scope?: RuntimeResourceScope;
  /** Replaces the driver the registry admits, e.g. to wrap its ports with a fault. */
  readonly wrapDriver?: (
    driver: ManagedRuntimeProviderDriverPort,
  ) => ManagedRuntimeProviderDriverPort;
  /** Runs instead of the harness, with the live lease the host hands to it. */
  readonly probe?: HarnessProbe;
  /** Run-input fields beyond scope and profile (memory stores and the control-plane access they use). */
  readonly input?: Pick<ManagedRuntimeRunInput, "memoryStores" | "sessionInputAccess">;
}

/** One finished host run. */
export interface CaseRun {
  readonly scope: RuntimeResourceScope;
  readonly result: ManagedRuntimeRunResult;
  readonly resources: ManagedRuntimeProviderResources;
  readonly observations: RunObservations;
}

/** Everything a case uses: the subject, fresh fence and orphan stores, and the registry and host. */
export interface CaseContext {
  readonly subject: ConformanceSubject;
  readonly fences: RuntimeResourceFencePort;
  readonly orphans: RuntimeOrphanPort;
  /** A new work item in this case's session, or in a fresh session. */
  scope(options?: { readonly freshSession?: boolean }): RuntimeResourceScope;
  /** A profile whose harness runs one of the suite's scripts. */
  profile(script: ConformanceScript, overrides?: ProfileOverrides): ManagedRuntimeProfile;
  /** Admits `profile` through the real registry and returns the live ports. */
  prepare(
    profile: ManagedRuntimeProfile,
    options?: Omit<CaseRunOptions, "probe">,
  ): Promise<PreparedResources>;
  /** Admits `profile` and runs one work item through the real host. Rethrows a probe's failure. */
  run(profile: ManagedRuntimeProfile, options?: CaseRunOptions): Promise<CaseRun>;
  /** The session's current publication, read the way the next work item would read it. */
  publication(scope: RuntimeResourceScope): Promise<RuntimeResourcePublication | null>;
}

/** Creates the context of one case run. */
export function createCaseContext(subject: ConformanceSubject, caseId: string): CaseContext {
  const fences = createMemoryFencePort();
  const orphans = createMemoryOrphanPort();
  const label = caseId.replace(/[^a-z0-9]+/gi, "-");
  let sessionId = `conformance-${label}-${randomUUID()}`;

  const prepare: CaseContext["prepare"] = async (profile, options = {}) => {
    const driver = options.wrapDriver ? options.wrapDriver(subject.driver) : subject.driver;
    const registry = createManagedRuntimeProviderRegistry({ drivers: [driver] });
    const scope = options.scope ?? context.scope();
    const prepared = await registry.prepare({
      provider: driver.descriptor().provider,
      placement: subject.placement,
      scope,
      profile,
      providerConfig: subject.providerConfig,
    });
    return { plan: prepared.plan, resources: prepared.resources };
  };

  const context: CaseContext = {
    subject,
    fences,
    orphans,
    scope(options = {}) {
      if (options.freshSession) sessionId = `conformance-${label}-${randomUUID()}`;
      return {
        workspaceId: "conformance-workspace",
        environmentId: "conformance-environment",
        sessionId,
        workId: `work-${randomUUID()}`,
      };
    },
    profile: (script, overrides) => buildProfile(subject.harness, script, overrides),
    prepare,
    async run(profile, options = {}) {
      const scope = options.scope ?? context.scope();
      const { resources } = await prepare(profile, { ...options, scope });
      const observations = createObservations();
      const observed = observeResources(resources, observations, options.probe);
      const host = createManagedRuntimeHost({
        ownerId: `conformance-${label}`,
        leaseTtlMs: subject.timeouts.leaseTtlMs,
        heartbeatIntervalMs: subject.timeouts.heartbeatIntervalMs,
        fences,
        orphans,
        sandbox: observed.sandbox,
        workspace: observed.workspace,
        outputs: observed.outputs,
        harnessDriver: observed.harnessDriver,
        ...(observed.runtimeCheckpoint ? { runtimeCheckpoint: observed.runtimeCheckpoint } : {}),
        ...(observed.credentialEgress ? { credentialEgress: observed.credentialEgress } : {}),
        ...(observed.sessionInputs ? { sessionInputs: observed.sessionInputs } : {}),
        ...(resources.environmentPackages
          ? { environmentPackages: resources.environmentPackages }
          : {}),
        ...(resources.memoryStores ? { memoryStores: resources.memoryStores } : {}),
        logger: recordingLogger(observations),
      });
      const result = await host.run({ scope, profile, ...options.input });
      if (observations.probeError !== undefined) throw observations.probeError;
      return { scope, result, resources, observations };
    },
    async publication(scope) {
      const reader = { ...scope, workId: `publication-reader-${randomUUID()}` };
      const acquired = await fences.acquire({
        scope: reader,
        ownerId: "conformance-publication-reader",
        ttlMs: 60_000,
      });
      if (acquired.type !== "acquired") return null;
      await fences.release({ fence: acquired.fence, reason: "completed" });
      return acquired.publication;
    },
  };
  return context;
}
