import type {
  HarnessRunInput,
  ManagedRuntimeProviderResources,
  ManagedSandboxLease,
  SessionOutputEntryCandidate,
  SessionOutputManifestCandidate,
  WorkspaceCheckpointCandidate,
} from "@open-managed-agents/runtime-resource-contract";
import type { HostLogger, LogFields } from "@open-managed-agents/managed-runtime-host";

/** What a run's ports handed back to the host, recorded as it happened. */
export interface RunObservations {
  /** Leases returned by `acquire` and `suspend`. */
  readonly leases: ManagedSandboxLease[];
  /** Errors thrown by `acquire`. */
  readonly acquireErrors: unknown[];
  readonly workspaceCandidates: WorkspaceCheckpointCandidate[];
  /** Entries returned by each `collect` call. */
  readonly collected: (readonly SessionOutputEntryCandidate[])[];
  readonly manifests: SessionOutputManifestCandidate[];
  /** Ids of the credential-egress bindings `prepare` returned; they must appear in no record. */
  readonly egressBindingIds: string[];
  /** Every host log line. */
  readonly logs: { readonly level: string; readonly event: string; readonly fields: LogFields }[];
  /** Number of harness runs the host started. */
  harnessRuns: number;
  /** First error a harness probe threw. */
  probeError: unknown;
}

/** A check that runs inside the host transaction, where the host hands the harness a live lease. */
export type HarnessProbe = (
  input: HarnessRunInput,
  resources: ManagedRuntimeProviderResources,
) => Promise<void>;

/** Creates empty observations. */
export function createObservations(): RunObservations {
  return {
    leases: [],
    acquireErrors: [],
    workspaceCandidates: [],
    collected: [],
    manifests: [],
    egressBindingIds: [],
    logs: [],
    harnessRuns: 0,
    probeError: undefined,
  };
}

/** A host logger that records every line into `observations`. */
export function recordingLogger(observations: RunObservations): HostLogger {
  const record = (level: string) => (event: string, fields: LogFields) => {
    observations.logs.push({ level, event, fields });
  };
  return { info: record("info"), warn: record("warn"), error: record("error") };
}

/**
 * Wraps the ports so every lease, checkpoint candidate, output listing and manifest they return is
 * recorded. With a `probe`, the harness port runs the probe instead of the harness and reports completion.
 */
export function observeResources(
  resources: ManagedRuntimeProviderResources,
  observations: RunObservations,
  probe?: HarnessProbe,
): ManagedRuntimeProviderResources {
  const { sandbox, workspace, outputs, harnessDriver, credentialEgress } = resources;
  return {
    ...resources,
    ...(credentialEgress
      ? {
          credentialEgress: {
            ...bind(credentialEgress),
            async prepare(input) {
              const binding = await credentialEgress.prepare(input);
              if (binding) observations.egressBindingIds.push(binding.bindingId);
              return binding;
            },
          },
        }
      : {}),
    sandbox: {
      ...bind(sandbox),
      async acquire(input) {
        try {
          const lease = await sandbox.acquire(input);
          observations.leases.push(lease);
          return lease;
        } catch (error) {
          observations.acquireErrors.push(error);
          throw error;
        }
      },
      async suspend(input) {
        const lease = await sandbox.suspend(input);
        observations.leases.push(lease);
        return lease;
      },
    },
    workspace: {
      ...bind(workspace),
      async checkpoint(input) {
        const candidate = await workspace.checkpoint(input);
        observations.workspaceCandidates.push(candidate);
        return candidate;
      },
    },
    outputs: {
      ...bind(outputs),
      async collect(input) {
        const entries = await outputs.collect(input);
        observations.collected.push(entries);
        return entries;
      },
      async finalize(input) {
        const manifest = await outputs.finalize(input);
        observations.manifests.push(manifest);
        return manifest;
      },
    },
    harnessDriver: {
      driverCapabilities: (scope) => harnessDriver.driverCapabilities(scope),
      async run(input) {
        observations.harnessRuns += 1;
        if (!probe) return harnessDriver.run(input);
        try {
          await probe(input, resources);
        } catch (error) {
          observations.probeError ??= error;
          throw error;
        }
        return { type: "completed" };
      },
    },
  };
}

/** Copies every method of a port, bound to it, so spreading keeps `this` intact. */
export function bind<T extends object>(port: T): T {
  const copy: Record<string, unknown> = {};
  let current: object | null = port;
  while (current !== null && current !== Object.prototype) {
    for (const key of Object.getOwnPropertyNames(current)) {
      const value = (port as Record<string, unknown>)[key];
      if (key !== "constructor" && !(key in copy))
        copy[key] = typeof value === "function" ? value.bind(port) : value;
    }
    current = Object.getPrototypeOf(current);
  }
  return copy as T;
}
