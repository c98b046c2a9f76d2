import type {
  ManagedRuntimeProfile,
  RuntimeProcessDeclaration,
} from "@open-managed-agents/runtime-resource-contract";
import { SCRIPTS, type ConformanceScript } from "./harness-scripts.js";
import type { ConformanceSubject } from "./subject.js";

/** What a case changes in the default profile. */
export interface ProfileOverrides {
  readonly workspace?: ManagedRuntimeProfile["workspace"];
  readonly outputs?: ManagedRuntimeProfile["outputs"];
  readonly runtimeCheckpoint?: ManagedRuntimeProfile["runtimeCheckpoint"];
  readonly credentialEgress?: ManagedRuntimeProfile["credentialEgress"];
  /** Extra environment of the harness process. */
  readonly env?: Readonly<Record<string, string>>;
  /** Runs the script under the supervisor protocol instead of as an AMA worker. */
  readonly supervised?: boolean;
  /** Replaces the harness executable, keeping the script as its arguments. */
  readonly command?: string;
}

/**
 * The default profile: any workspace strategy (`ephemeral` admits all), outputs and runtime checkpoints
 * off, egress omitted, and the harness running `script` through the configured shell.
 */
export function buildProfile(
  harness: ConformanceSubject["harness"],
  script: ConformanceScript,
  overrides: ProfileOverrides = {},
): ManagedRuntimeProfile {
  const process: RuntimeProcessDeclaration = {
    command: overrides.command ?? harness.shell,
    args: ["-c", SCRIPTS[script]],
    env: { ...harness.env, ...overrides.env },
  };
  return {
    workspace: overrides.workspace ?? { requirement: "ephemeral" },
    outputs: overrides.outputs ?? { requirement: "disabled" },
    runtimeCheckpoint: overrides.runtimeCheckpoint ?? "disabled",
    ...(overrides.credentialEgress ? { credentialEgress: overrides.credentialEgress } : {}),
    driver: overrides.supervised
      ? {
          type: "openma_supervised",
          protocol: "openma-harness-supervisor-v1",
          supervisor: process,
          harness: { id: "openma-conformance", version: "1" },
          readyTimeoutMs: 15_000,
          heartbeatTimeoutMs: 15_000,
          drainTimeoutMs: 5_000,
        }
      : { type: "ama_worker", process },
  };
}
