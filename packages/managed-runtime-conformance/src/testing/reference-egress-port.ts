import { randomUUID } from "node:crypto";
import {
  type CredentialEgressCapabilities,
  type CredentialEgressPort,
  InvalidRequestError,
} from "@open-managed-agents/runtime-resource-contract";

/** What the simulated egress port recorded about one binding. */
export type SimulatedEgressState = "prepared" | "attached" | "revoked" | "released";

/** Capabilities the simulated port claims. */
export const SIMULATED_EGRESS_CAPABILITIES: CredentialEgressCapabilities = Object.freeze({
  enforcement: "enforced",
  credentialMode: "live",
  interceptedProtocols: Object.freeze(["http", "https"] as const),
});

/**
 * A credential egress port that follows the port protocol (prepare, attach, revoke, release) and records
 * each binding's state, but filters no traffic. It claims `enforced` only so the suite's claimed branch can
 * run against the reference driver; it is not evidence of enforcement.
 */
export function createSimulatedEgressPort(
  states: Map<string, SimulatedEgressState>,
): CredentialEgressPort {
  const advance = (
    bindingId: string,
    from: readonly SimulatedEgressState[],
    to: SimulatedEgressState,
  ): void => {
    const current = states.get(bindingId);
    if (current === undefined || !from.includes(current)) {
      throw new InvalidRequestError({
        message: `egress binding cannot move from ${current ?? "unknown"} to ${to}`,
        context: { from: current ?? null, to },
      });
    }
    states.set(bindingId, to);
  };
  return {
    capabilities: async () => SIMULATED_EGRESS_CAPABILITIES,
    async prepare() {
      const bindingId = `egress-${randomUUID()}`;
      states.set(bindingId, "prepared");
      return { bindingId, enforcement: "enforced", credentialMode: "live" };
    },
    async attach(input) {
      advance(input.binding.bindingId, ["prepared"], "attached");
    },
    async revoke(input) {
      advance(input.binding.bindingId, ["prepared", "attached", "revoked"], "revoked");
    },
    async release(input) {
      if (states.get(input.binding.bindingId) === "released") return;
      advance(input.binding.bindingId, ["prepared", "attached", "revoked"], "released");
    },
  };
}
