import type Anthropic from "@anthropic-ai/sdk";
import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import type { ServiceConfig } from "../config/schema.js";
import type { ReadinessState } from "../http/health-server.js";
import type { RuntimeStore } from "../stores/runtime-store.js";

/** How long one /readyz answer is reused, so a scraper cannot turn readiness into load on the API. */
const CACHE_MS = 2_000;

/**
 * Readiness of the three dependencies. The API is probed with the environment key (`work.stats`, which
 * claims nothing) and also follows the claim loop's own failures; the store is probed with a real write;
 * the driver is failing from a failed host build until the next one succeeds.
 */
export function createDependencyHealth(options: {
  client: Anthropic;
  config: ServiceConfig;
  store: RuntimeStore;
}) {
  let driver: { ok: boolean; detail?: string } = { ok: true };
  let cached: { at: number; state: Promise<ReadinessState> } | null = null;
  const probeApi = async () => {
    try {
      await options.client.beta.environments.work.stats(
        options.config.environmentId,
        {},
        {
          headers: { Authorization: `Bearer ${options.config.environmentKey}` },
          maxRetries: 0,
          timeout: 5_000,
        },
      );
      return { ok: true };
    } catch (error) {
      const status = (error as { status?: number }).status;
      return {
        ok: false,
        detail: status ? `the Work API answered ${status}` : "the Work API is unreachable",
      };
    }
  };
  const probeStore = async () => {
    try {
      await options.store.probeWritable();
      return { ok: true };
    } catch (error) {
      return { ok: false, detail: `the store refused a write: ${(error as Error).message}` };
    }
  };
  const compute = async (): Promise<ReadinessState> => {
    const [api, store] = await Promise.all([probeApi(), probeStore()]);
    return { api, store, driver };
  };
  return {
    state(): Promise<ReadinessState> {
      const now = Date.now();
      if (!cached || now - cached.at > CACHE_MS) cached = { at: now, state: compute() };
      return cached.state;
    },
    /** The claim loop failed: the next /readyz probes afresh. */
    apiFailed() {
      cached = null;
    },
    driverFailed(error: unknown) {
      driver = {
        ok: false,
        detail: ManagedRuntimeError.isInstance(error)
          ? `${error.code}: ${error.message}`
          : "the driver failed to prepare a host",
      };
      cached = null;
    },
    driverOk() {
      driver = { ok: true };
    },
  };
}
