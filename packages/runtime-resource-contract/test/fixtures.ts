import type {
  ManagedRuntimeProfile,
  ManagedRuntimeProviderDriverDescriptor,
  ManagedSandboxLease,
  RuntimeCheckpointRef,
  RuntimeOrphanRecord,
  RuntimeResourceScope,
  SandboxCheckpointHandle,
} from "../src/index.js";

/** Valid records shared by the schema and error tests. */
export const scope: RuntimeResourceScope = {
  workspaceId: "ws-1",
  environmentId: "env-1",
  sessionId: "sess-1",
  workId: "work-1",
};

export const lease: ManagedSandboxLease = {
  provider: "cloudflare",
  runtimeId: "sess-1",
  metadata: { region: "weur", warm: true, slots: 2, note: null },
};

export const orphan: RuntimeOrphanRecord = {
  id: '["ws-1","env-1","sess-1","work-1",3,"cloudflare","sess-1"]',
  scope,
  generation: 3,
  ownerId: "host-a",
  sandbox: lease,
  reason: "failed",
  attempts: 1,
  lastError: "terminate failed: [redacted]",
  createdAt: "2026-01-01T00:00:00.000Z",
  updatedAt: "2026-01-01T00:00:00.000Z",
};

export const checkpointRef: RuntimeCheckpointRef = {
  provider: "cloudflare",
  checkpointId: "sha256:abc",
  kind: "filesystem",
  sourceRuntimeId: "sess-1",
  sessionId: "sess-1",
  workGeneration: 2,
  workspaceRevision: 5,
  harnessVersion: "1.2.3",
  runtimeIdentity: '{"command":"harness","env":["PATH"]}',
};

export const checkpointHandle: SandboxCheckpointHandle = {
  provider: "local-subprocess",
  checkpointId: `sha256:${"a".repeat(64)}`,
  sourceRuntimeId: "local-1",
  kind: "filesystem",
  scope: "portable",
};

export const profile: ManagedRuntimeProfile = {
  workspace: {
    requirement: "continuable",
    preferredStrategies: ["retained_runtime", "checkpoint_restore"],
  },
  outputs: { requirement: "durable", preferredStrategies: ["final_collect"] },
  runtimeCheckpoint: "optional",
  credentialEgress: { requirement: "best_effort" },
  driver: {
    type: "openma_supervised",
    protocol: "openma-harness-supervisor-v1",
    supervisor: {
      command: "/usr/local/bin/supervisor",
      args: ["--stdio"],
      cwd: "/workspace",
      env: { LOG_LEVEL: "info" },
    },
    harness: { id: "harness", version: "1.0.0" },
    readyTimeoutMs: 10_000,
    heartbeatTimeoutMs: 5_000,
    drainTimeoutMs: 30_000,
  },
};

export const descriptor: ManagedRuntimeProviderDriverDescriptor = {
  specificationVersion: "v1",
  provider: "cloudflare",
  version: "0.1.0",
  placements: ["in_process"],
  capabilities: {
    sandbox: { suspendResume: "unsupported", hardTerminate: "supported", runtimeCheckpoints: [] },
    workspace: { strategies: ["checkpoint_restore", "ephemeral"] },
    outputs: { strategies: [{ strategy: "final_collect", durability: "durable" }] },
    harness: { drivers: ["ama_worker"] },
  },
  credentialEgress: {
    enforcement: "unsupported",
    credentialMode: "live",
    interceptedProtocols: [],
  },
};
