import {
  type ErrorContext,
  type ManagedSandboxLease,
  ManagedRuntimeError,
  ProviderMismatchError,
  type RuntimeResourceScope,
  SandboxFailedError,
  parseManagedSandboxLease,
} from "@open-managed-agents/runtime-resource-contract";
import type {
  ManagedSandboxRuntime,
  SandboxFactoryContext,
  SandboxFactoryEnv,
  SandboxProviderPort,
} from "@open-managed-agents/sandbox";

/** How many destroyed runtime ids are remembered, so repeated terminate/reap calls stay cheap. */
const GONE_MEMORY = 4_096;

/**
 * Live runtimes of this process, keyed by runtime id. Leases stay serializable: they carry only the
 * provider and runtime id, and a lease whose runtime is not here is reconnected with `provider.connect`.
 */
export interface RuntimeRegistry<R extends ManagedSandboxRuntime> {
  /** Parses a lease and refuses a foreign one with `provider_mismatch`. */
  ownLease(lease: unknown): ManagedSandboxLease;
  /** Records a runtime this process created, restored or resumed. */
  adopt(runtime: R): void;
  /** The live runtime of a lease; reconnects (and remembers) when this process does not hold it. */
  resolve(scope: RuntimeResourceScope, lease: ManagedSandboxLease): Promise<R>;
  /** The runtime this process holds, without reconnecting. */
  held(runtimeId: string): R | undefined;
  /** Destroys a runtime; a runtime that is already gone is success. Safe to repeat. */
  destroy(scope: RuntimeResourceScope, lease: ManagedSandboxLease): Promise<void>;
  /** True once this process destroyed the runtime. */
  isGone(runtimeId: string): boolean;
}

/** Dependencies of {@link createRuntimeRegistry}. */
export interface RuntimeRegistryOptions<R extends ManagedSandboxRuntime> {
  readonly providerName: string;
  readonly provider: SandboxProviderPort<R>;
  readonly context: (scope: RuntimeResourceScope) => SandboxFactoryContext;
  readonly env?: SandboxFactoryEnv;
}

/** Creates the per-process runtime map of one composition. */
export function createRuntimeRegistry<R extends ManagedSandboxRuntime>(
  options: RuntimeRegistryOptions<R>,
): RuntimeRegistry<R> {
  const live = new Map<string, R>();
  const connecting = new Map<string, Promise<R>>();
  const gone = new Set<string>();

  const markGone = (runtimeId: string): void => {
    live.delete(runtimeId);
    gone.add(runtimeId);
    if (gone.size > GONE_MEMORY) gone.delete(gone.values().next().value as string);
  };

  const connect = (scope: RuntimeResourceScope, runtimeId: string): Promise<R> => {
    const pending = connecting.get(runtimeId);
    if (pending) return pending;
    const attempt = options.provider
      .connect(runtimeId, options.context(scope), options.env)
      .then((runtime) => {
        live.set(runtimeId, runtime);
        return runtime;
      })
      .catch((error: unknown) => {
        throw providerFailure(error, `reconnecting to runtime ${runtimeId} failed`, { runtimeId });
      })
      .finally(() => connecting.delete(runtimeId));
    connecting.set(runtimeId, attempt);
    return attempt;
  };

  const resolve = async (scope: RuntimeResourceScope, lease: ManagedSandboxLease): Promise<R> =>
    live.get(lease.runtimeId) ?? connect(scope, lease.runtimeId);

  return {
    ownLease(input) {
      const lease = parseManagedSandboxLease(input);
      if (lease.provider !== options.providerName) {
        throw new ProviderMismatchError({
          message: `lease belongs to provider "${lease.provider}", not "${options.providerName}"`,
          context: { expected: options.providerName, actual: lease.provider },
        });
      }
      return lease;
    },
    adopt(runtime) {
      const { runtimeId } = runtime.runtimeHandle();
      gone.delete(runtimeId);
      live.set(runtimeId, runtime);
    },
    resolve,
    held: (runtimeId) => live.get(runtimeId),
    async destroy(scope, lease) {
      if (gone.has(lease.runtimeId)) return;
      let runtime: R;
      try {
        runtime = await resolve(scope, lease);
      } catch (error) {
        if (ManagedRuntimeError.hasCode(error, "not_found")) return markGone(lease.runtimeId);
        throw error;
      }
      try {
        await runtime.destroy();
      } catch (error) {
        if (!ManagedRuntimeError.hasCode(error, "not_found")) {
          throw providerFailure(error, `destroying runtime ${lease.runtimeId} failed`, {
            runtimeId: lease.runtimeId,
          });
        }
      }
      markGone(lease.runtimeId);
    },
    isGone: (runtimeId) => gone.has(runtimeId),
  };
}

/** Keeps typed errors as they are; wraps anything else as `sandbox_failed` with the cause attached. */
export function providerFailure(
  error: unknown,
  message: string,
  context: ErrorContext = {},
): ManagedRuntimeError {
  if (ManagedRuntimeError.isInstance(error)) return error;
  const detail = error instanceof Error ? error.message : String(error);
  return new SandboxFailedError({ message: `${message}: ${detail}`, context, cause: error });
}
