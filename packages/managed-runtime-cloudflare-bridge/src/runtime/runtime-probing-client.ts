import {
  ManagedRuntimeError,
  UnavailableError,
} from "@open-managed-agents/runtime-resource-contract";
import type { BridgeClient, BridgeExecEvent } from "../wire/bridge-client.js";

/**
 * Bridge codes that say a container could not be reached or started, without saying why. Cloudflare's
 * bridge answers both a dead container runtime and one container's crash this way (a 502 `pool_error`
 * "Failed to start container", an exec stream's `exec_transport_error` "HTTP error! status: 500").
 */
const AMBIGUOUS_BRIDGE_CODES = new Set(["pool_error", "exec_transport_error"]);

/** How long a probe's finding explains a later delete's failure of the same kind. */
const FINDING_TTL_MS = 60_000;

function bridgeCodeOf(error: unknown): string | null {
  if (!ManagedRuntimeError.isInstance(error)) return null;
  const code = (error.context as { bridgeCode?: unknown } | undefined)?.bridgeCode;
  return typeof code === "string" ? code : null;
}

/** Whether `error` is the bridge's pool refusing to start a container (not a capacity refusal). */
function isStartFailure(error: unknown): boolean {
  return bridgeCodeOf(error) === "pool_error";
}

/**
 * Wraps a client so that a failure the bridge reports ambiguously is named by evidence. After a call fails
 * with a `pool_error` or `exec_transport_error`, one probe asks the bridge whether the sandbox runs
 * (`GET …/running`, which makes the bridge start a container when none runs): when that start fails too,
 * no container can be had and the error becomes `unavailable`, naming the container runtime; otherwise
 * the call's own error stands (one container failed, the runtime did not). The probe goes through the
 * wrapped client only, so the same reading holds against Cloudflare and the local stack.
 *
 * A delete the bridge answers with the same start failure within a minute of such a finding is named the
 * same way, without a probe of its own (a probe would start the container the delete is ending).
 */
export function createRuntimeProbingClient(
  client: BridgeClient,
  now: () => number = Date.now,
): BridgeClient {
  let unavailableSince: number | null = null;

  const runtimeUnavailable = (
    operation: string,
    original: ManagedRuntimeError,
    probe: string,
  ): UnavailableError =>
    new UnavailableError({
      message:
        `bridge ${operation} failed: the container runtime behind the bridge is unavailable: ${probe} ` +
        `(the call's own error: ${original.message})`,
      context: { operation, service: "container_runtime", bridgeCode: bridgeCodeOf(original) },
      cause: original,
    });

  /** Probes after `error` and returns the error to throw. Never throws itself. */
  const explain = async (
    id: string,
    operation: string,
    error: unknown,
    signal?: AbortSignal,
  ): Promise<unknown> => {
    if (
      !ManagedRuntimeError.isInstance(error) ||
      !AMBIGUOUS_BRIDGE_CODES.has(bridgeCodeOf(error) ?? "")
    )
      return error;
    // A connection the bridge dropped (its keep-alive after the failed call) gets one more try.
    for (let attempt = 0; attempt < 2 && signal?.aborted !== true; attempt++) {
      try {
        await client.running(id, signal);
        // The bridge has a container for the sandbox again: the runtime works, the call's error stands.
        return error;
      } catch (probeError) {
        if (isStartFailure(probeError)) {
          unavailableSince = now();
          return runtimeUnavailable(
            operation,
            error,
            "the bridge could not start a container when asked again",
          );
        }
        if (!UnavailableError.isInstance(probeError)) return error;
      }
    }
    return error;
  };

  const probed = async <T>(
    id: string,
    operation: string,
    call: () => Promise<T>,
    signal?: AbortSignal,
  ): Promise<T> => {
    try {
      return await call();
    } catch (error) {
      throw await explain(id, operation, error, signal);
    }
  };

  return {
    create: (signal) => client.create(signal),
    running: (id, signal) => client.running(id, signal),
    async *exec(id, input): AsyncGenerator<BridgeExecEvent> {
      try {
        yield* client.exec(id, input);
      } catch (error) {
        throw await explain(id, "exec", error, input.signal);
      }
    },
    readFile: (id, path, signal) =>
      probed(id, "file.read", () => client.readFile(id, path, signal), signal),
    writeFile: (id, path, body, signal) =>
      probed(id, "file.write", () => client.writeFile(id, path, body, signal), signal),
    persist: (id, excludes, signal) =>
      probed(id, "persist", () => client.persist(id, excludes, signal), signal),
    hydrate: (id, tar, signal) =>
      probed(id, "hydrate", () => client.hydrate(id, tar, signal), signal),
    async destroy(id) {
      try {
        await client.destroy(id);
      } catch (error) {
        const recent = unavailableSince !== null && now() - unavailableSince < FINDING_TTL_MS;
        if (!recent || !isStartFailure(error) || !ManagedRuntimeError.isInstance(error))
          throw error;
        throw runtimeUnavailable(
          "delete",
          error,
          "a probe found that no container could be started",
        );
      }
    },
  };
}
