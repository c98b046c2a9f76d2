import {
  InvalidRequestError,
  ProviderMismatchError,
  UnsupportedOperationError,
} from "@open-managed-agents/runtime-resource-contract";
import type {
  ManagedSandboxRuntime,
  SandboxFactoryContext,
  SandboxProviderPort,
} from "@open-managed-agents/sandbox";
import { BRIDGE_SANDBOX_ID_PATTERN, type BridgeClient } from "../wire/bridge-client.js";
import {
  type BridgeCheckpointer,
  createBridgeRuntime,
  markRuntimeStarted,
} from "./bridge-runtime.js";

/** Options of {@link createBridgeSandboxProvider}. */
export interface BridgeSandboxProviderOptions {
  readonly provider: string;
  readonly client: BridgeClient;
  readonly checkpointer: BridgeCheckpointer;
  readonly maxRequestBytes: number;
  readonly maxExecOutputBytes: number;
}

/**
 * Creates, restores and reconnects bridge sandboxes. The bridge mints sandbox ids itself and cannot
 * retain a runtime, so `resume` of a runtime-scoped handle is refused.
 */
export function createBridgeSandboxProvider(
  options: BridgeSandboxProviderOptions,
): SandboxProviderPort<ManagedSandboxRuntime> {
  const runtimeFor = (sandboxId: string, sessionId: string | undefined) =>
    createBridgeRuntime({
      provider: options.provider,
      client: options.client,
      sandboxId,
      ...(sessionId === undefined ? {} : { sessionId }),
      checkpointer: options.checkpointer,
      maxRequestBytes: options.maxRequestBytes,
      maxExecOutputBytes: options.maxExecOutputBytes,
    });

  // Minting an id starts no container, so the id is journaled between the mint and the first exec.
  const start = async (context: SandboxFactoryContext | undefined) => {
    const sandboxId = await options.client.create();
    await context?.beforeStart?.(sandboxId);
    const runtime = runtimeFor(sandboxId, context?.sessionId);
    try {
      await markRuntimeStarted(options.client, sandboxId);
      return runtime;
    } catch (error) {
      await runtime.destroy().catch(() => undefined);
      throw error;
    }
  };

  return {
    provider: options.provider,

    async create(context) {
      return start(context);
    },

    async resume(handle) {
      if (handle.provider !== options.provider) {
        throw new ProviderMismatchError({
          message: "handle belongs to another provider",
          context: { expected: options.provider, actual: handle.provider },
        });
      }
      throw new UnsupportedOperationError({
        message:
          "the Cloudflare Sandbox Bridge cannot retain a runtime; restore a portable checkpoint instead",
        context: { provider: options.provider },
      });
    },

    async restore(checkpoint, context) {
      if (checkpoint.provider !== options.provider) {
        throw new ProviderMismatchError({
          message: "checkpoint belongs to another provider",
          context: { expected: options.provider, actual: checkpoint.provider },
        });
      }
      // The archive is verified and inspected before a sandbox exists: a refused one leaves nothing behind.
      const prepared = await options.checkpointer.prepareRestore({
        handle: checkpoint,
        sessionId: context?.sessionId,
      });
      try {
        const runtime = await start(context);
        try {
          await prepared.send(runtime.runtimeHandle().runtimeId);
          return runtime;
        } catch (error) {
          await runtime.destroy().catch(() => undefined);
          throw error;
        }
      } finally {
        await prepared.dispose();
      }
    },

    async connect(runtimeId, context) {
      if (!BRIDGE_SANDBOX_ID_PATTERN.test(runtimeId)) {
        throw new InvalidRequestError({
          message: "runtime id is not a bridge sandbox id",
          context: { provider: options.provider },
        });
      }
      return runtimeFor(runtimeId, context?.sessionId);
    },
  };
}
