import {
  type CredentialEgressCapabilities,
  type CredentialEgressPort,
  LeaseLostError,
  type RuntimeCheckpointPort,
  type SessionInputMaterializerPort,
} from "@open-managed-agents/runtime-resource-contract";
import type { FakeSandbox } from "./fake-sandbox.js";

/** Default capabilities of the fake egress port. */
export const FAKE_EGRESS_CAPABILITIES: CredentialEgressCapabilities = {
  enforcement: "enforced",
  credentialMode: "live",
  interceptedProtocols: ["http", "https"],
};

/** An egress port that prepares one binding per work id and generation. */
export function createFakeCredentialEgressPort(
  capabilities: CredentialEgressCapabilities = FAKE_EGRESS_CAPABILITIES,
): CredentialEgressPort {
  return {
    capabilities: async () => capabilities,
    async prepare({ scope, fence }) {
      if (capabilities.enforcement === "unsupported") return null;
      return {
        bindingId: `egress-${scope.workId}-${fence.generation}`,
        enforcement: capabilities.enforcement,
        credentialMode: capabilities.credentialMode,
      };
    },
    attach: async () => undefined,
    revoke: async () => undefined,
    release: async () => undefined,
  };
}

/** A runtime-checkpoint port whose checkpoints describe the input exactly; restore starts a runtime in `sandbox`. */
export function createFakeRuntimeCheckpointPort(sandbox: FakeSandbox): RuntimeCheckpointPort {
  let count = 0;
  return {
    async create({
      scope,
      fence,
      sandbox: lease,
      kind,
      workspaceRevision,
      harnessVersion,
      runtimeIdentity,
    }) {
      count += 1;
      return {
        provider: lease.provider,
        checkpointId: `rck-${count}`,
        kind,
        sourceRuntimeId: lease.runtimeId,
        sessionId: scope.sessionId,
        workGeneration: fence.generation,
        workspaceRevision,
        harnessVersion,
        runtimeIdentity,
      };
    },
    async restore({ journal }) {
      const runtimeId = sandbox.nextId();
      await journal?.record({ provider: sandbox.provider, runtimeId });
      return sandbox.start("restore", runtimeId);
    },
  };
}

/** A materializer that asks `authorize()` before every materialize and synchronize, and stops when refused. */
export function createFakeSessionInputPort(): SessionInputMaterializerPort {
  const guard = async (authorize: () => Promise<boolean>) => {
    if (!(await authorize()))
      throw new LeaseLostError({
        message: "session inputs refused: the fence is no longer current",
      });
  };
  return {
    materialize: ({ authorize }) => guard(authorize),
    synchronize: ({ authorize }) => guard(authorize),
  };
}
