import type {
  ManagedRuntimeProviderDriverPort,
  ManagedSandboxLease,
  ManagedSandboxPort,
  RuntimeResourceScope,
} from "@open-managed-agents/runtime-resource-contract";
import { withDeadline } from "@open-managed-agents/runtime-utils";
import { describeError } from "../cases/assertions.js";
import { bind } from "../cases/observe.js";

/** What the runner did with the runtimes a run left behind. */
export interface LeftoverRuntimes {
  /** Runtimes no terminate or reap had ended, reaped by the runner after the last case. */
  readonly reaped: number;
  /** Runtimes the runner could not reap, with why; they may still be running at the provider. */
  readonly failed: readonly { readonly runtimeId: string; readonly error: string }[];
}

/** The runtimes the suite started through a driver, so a runner can reap what it started. */
export interface StartedRuntimes {
  /** `driver` whose sandbox ports record each lease they return and forget it once it was ended. */
  readonly driver: ManagedRuntimeProviderDriverPort;
  /** Reaps every runtime still recorded, each within `ms`. */
  reapAll(options: { readonly ms: number }): Promise<LeftoverRuntimes>;
}

interface Started {
  readonly sandbox: ManagedSandboxPort;
  readonly scope: RuntimeResourceScope;
  readonly lease: ManagedSandboxLease;
}

/**
 * Wraps `driver` so every runtime a case starts is known until a terminate or reap of it succeeds. A
 * driver whose terminate throws would otherwise leave runtimes (local ones keep the runner's process
 * alive) that nothing ends.
 */
export function trackStartedRuntimes(driver: ManagedRuntimeProviderDriverPort): StartedRuntimes {
  const started = new Map<string, Started>();
  const key = (lease: ManagedSandboxLease) => `${lease.provider}\u0000${lease.runtimeId}`;
  const tracked: ManagedRuntimeProviderDriverPort = {
    ...bind(driver),
    async create(input) {
      const resources = await driver.create(input);
      const sandbox = resources.sandbox;
      return {
        ...resources,
        sandbox: {
          ...bind(sandbox),
          async acquire(acquireInput) {
            const lease = await sandbox.acquire(acquireInput);
            started.set(key(lease), { sandbox, scope: acquireInput.scope, lease });
            return lease;
          },
          async terminate(terminateInput) {
            await sandbox.terminate(terminateInput);
            started.delete(key(terminateInput.lease));
          },
          async reap(reapInput) {
            await sandbox.reap(reapInput);
            started.delete(key(reapInput.lease));
          },
        },
      };
    },
  };
  return {
    driver: tracked,
    async reapAll({ ms }) {
      const failed: { runtimeId: string; error: string }[] = [];
      let reaped = 0;
      for (const [id, entry] of [...started]) {
        try {
          const reap = () =>
            entry.sandbox.reap({ scope: entry.scope, lease: entry.lease, reason: "failed" });
          await withDeadline(reap, { ms, operation: `reaping runtime ${entry.lease.runtimeId}` });
          started.delete(id);
          reaped += 1;
        } catch (error) {
          failed.push({ runtimeId: entry.lease.runtimeId, error: describeError(error) });
        }
      }
      return { reaped, failed };
    },
  };
}
