import {
  CapabilityUnsupportedError,
  type ErrorContext,
  type ManagedRuntimeError,
  type ManagedSandboxLease,
  type ManagedSandboxPort,
  ProviderMismatchError,
  type SandboxAcquireInput,
  UnsupportedOperationError,
  createError,
  redactSecrets,
} from "@open-managed-agents/runtime-resource-contract";
import { type ManagedSandboxRuntime, verifyRuntimeEnvironment } from "@open-managed-agents/sandbox";
import { throwIfAborted } from "./abort.js";
import {
  type EncodedCheckpointHandle,
  checkpointMetadata,
  decodeCheckpointMetadata,
  encodeCheckpointHandle,
} from "./checkpoint-handle.js";
import type { ResolvedProviderManagedRuntimeOptions } from "./options.js";
import { type RuntimeRegistry, providerFailure } from "./runtime-registry.js";

/** Dependencies of {@link createProviderSandboxPort}. */
export interface ProviderSandboxPortDependencies<R extends ManagedSandboxRuntime> {
  readonly options: ResolvedProviderManagedRuntimeOptions<R>;
  readonly registry: RuntimeRegistry<R>;
  /** Executable the readiness probe checks. */
  readonly readinessCommand: string;
  /** The probe also records what `<readinessCommand> --version` prints in the lease (the AMA worker lane). */
  readonly reportHarnessVersion?: boolean;
}

/** Lease metadata key of the harness's `--version` line, so an operator sees which worker build ran an item. */
export const HARNESS_VERSION_METADATA_KEY = "oma.harness.version";

/**
 * The managed sandbox port over a provider: acquire creates (or restores from the workspace binding's
 * verified checkpoint), probes readiness and renews the lease before any lease is returned.
 */
export function createProviderSandboxPort<R extends ManagedSandboxRuntime>(
  dependencies: ProviderSandboxPortDependencies<R>,
): ManagedSandboxPort {
  const { options, registry } = dependencies;
  const { provider, providerName } = options;

  const startRuntime = async (
    input: SandboxAcquireInput,
    checkpoint: EncodedCheckpointHandle | null,
  ): Promise<R> => {
    const { journal } = input;
    const context = {
      ...options.context(input.scope),
      ...(journal
        ? {
            beforeStart: (runtimeId: string) =>
              journal.record({ provider: providerName, runtimeId }),
          }
        : {}),
    };
    try {
      if (checkpoint === null) return await provider.create(context, options.env);
      if (checkpoint.handle.scope === "runtime")
        return await provider.resume(checkpoint.handle, context, options.env);
      return await provider.restore(checkpoint.handle, context, options.env);
    } catch (error) {
      const verb =
        checkpoint === null
          ? "create"
          : checkpoint.handle.scope === "runtime"
            ? "resume"
            : "restore";
      throw providerFailure(error, `provider ${providerName} could not ${verb} a runtime`, {
        provider: providerName,
        operation: verb,
      });
    }
  };

  const prepareRuntime = async (
    runtime: R,
    signal: AbortSignal,
  ): Promise<{ runtimeId: string; version: string | null }> => {
    const handle = runtime.runtimeHandle();
    if (handle.provider !== providerName) {
      throw new ProviderMismatchError({
        message: `provider returned a runtime of "${handle.provider}", not "${providerName}"`,
        context: { expected: providerName, actual: handle.provider },
      });
    }
    const { timeoutMs } = options.readiness ?? {};
    const ready = await verifyRuntimeEnvironment(runtime, {
      command: dependencies.readinessCommand,
      signal,
      reportVersion: dependencies.reportHarnessVersion ?? false,
      ...(timeoutMs ? { timeoutMs } : {}),
    });
    await runtime.renewLease({ ttlMs: options.leaseTtlMs });
    throwIfAborted(signal, "acquire");
    return { runtimeId: handle.runtimeId, version: ready.version ?? null };
  };

  return {
    capabilities: async () => options.sandboxCapabilities,

    async acquire(input) {
      throwIfAborted(input.signal, "acquire");
      const strategy = input.plan.workspaceStrategy;
      if (strategy !== "checkpoint_restore" && strategy !== "retained_runtime") {
        throw new CapabilityUnsupportedError({
          message: `workspace strategy ${strategy} is not offered by ${providerName}`,
          context: { strategy },
        });
      }
      // The binding was verified at materialize; verify again so a tampered binding never reaches the provider.
      const checkpoint = decodeCheckpointMetadata(input.workspace.metadata, {
        provider: providerName,
        scope: strategy === "retained_runtime" ? "runtime" : "portable",
        source: "workspace binding",
      });
      const runtime = await startRuntime(input, checkpoint);
      let prepared: { runtimeId: string; version: string | null };
      try {
        // A provider that could not journal before starting is journaled now, before anything else runs.
        await input.journal?.record({
          provider: providerName,
          runtimeId: runtime.runtimeHandle().runtimeId,
        });
        prepared = await prepareRuntime(runtime, input.signal);
      } catch (error) {
        throw await discardRuntime(
          runtime,
          providerFailure(error, "runtime failed before its lease was published"),
        );
      }
      registry.adopt(runtime);
      const { runtimeId, version } = prepared;
      return {
        provider: providerName,
        runtimeId,
        ...(version === null ? {} : { metadata: { [HARNESS_VERSION_METADATA_KEY]: version } }),
      };
    },

    async heartbeat({ scope, fence, lease }) {
      const own = registry.ownLease(lease);
      if (registry.isGone(own.runtimeId))
        return { type: "lost", reason: "the runtime was terminated" };
      try {
        const runtime = await registry.resolve(scope, own);
        if ((await runtime.status()) === "stopped")
          return { type: "lost", reason: "the runtime is stopped" };
        await runtime.renewLease({ ttlMs: options.leaseTtlMs });
        return { type: "alive" };
      } catch (error) {
        const detail = error instanceof Error ? error.message : String(error);
        return {
          type: "lost",
          reason: redactSecrets(`heartbeat failed: ${detail}`, [fence.token]),
        };
      }
    },

    async suspend({ scope, lease, signal }): Promise<ManagedSandboxLease> {
      if (options.sandboxCapabilities.suspendResume !== "supported") {
        throw new UnsupportedOperationError({
          message: `${providerName} does not retain runtimes (suspendResume is unsupported)`,
        });
      }
      throwIfAborted(signal, "suspend");
      const own = registry.ownLease(lease);
      const runtime = await registry.resolve(scope, own);
      let handle: unknown;
      try {
        handle = await runtime.suspend({ kind: options.workspace.retainedSuspendKind });
      } catch (error) {
        throw providerFailure(error, `suspending runtime ${own.runtimeId} failed`, {
          runtimeId: own.runtimeId,
        });
      }
      const encoded = encodeCheckpointHandle(handle, {
        provider: providerName,
        scope: "runtime",
        source: "suspended runtime",
      });
      return {
        provider: providerName,
        runtimeId: own.runtimeId,
        metadata: { ...own.metadata, ...checkpointMetadata(encoded) },
      };
    },

    async terminate({ scope, lease }) {
      await registry.destroy(scope, registry.ownLease(lease));
    },

    async reap({ scope, lease }) {
      await registry.destroy(scope, registry.ownLease(lease));
    },

    async inspect(lease) {
      const own = registry.ownLease(lease);
      if (registry.isGone(own.runtimeId)) return { state: "stopped" };
      // Reconnecting could wake a sleeping runtime, so only runtimes this process holds are observed.
      const runtime = registry.held(own.runtimeId);
      if (!runtime) return { state: "unknown" };
      try {
        return { state: await runtime.status() };
      } catch {
        return { state: "unknown" };
      }
    },
  };
}

/** Destroys a runtime that never got a lease; a failed destroy is reported in the returned error. */
async function discardRuntime(
  runtime: ManagedSandboxRuntime,
  failure: ManagedRuntimeError,
): Promise<ManagedRuntimeError> {
  try {
    await runtime.destroy();
    return failure;
  } catch (cleanupError) {
    const detail = cleanupError instanceof Error ? cleanupError.message : String(cleanupError);
    return createError(failure.code, {
      message: `${failure.message}; destroying the runtime also failed: ${detail}`,
      context: { ...(failure.context as ErrorContext), cleanupFailed: true },
      cause: failure,
    });
  }
}
