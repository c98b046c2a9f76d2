import { getSandbox } from "@cloudflare/sandbox";
import { createR2BindingBlobStore } from "@open-managed-agents/blob-store/r2";
import type { CloudflareManagedRuntimeOptions } from "@open-managed-agents/managed-runtime-cloudflare";
import { createCloudflareSdkSandbox } from "@open-managed-agents/managed-runtime-cloudflare/sdk";
import type { WorkerBindings } from "../bindings.js";
import type { WorkerConfig } from "../config.js";
import { createD1UsageLedger } from "../usage/usage-ledger.js";
import { SANDBOX_RUNTIME_ENVIRONMENT } from "./sandbox-image.js";

/** Called with every runtime id the driver opens, before its sandbox is used. */
export type RuntimeObserver = (runtimeId: string) => Promise<void>;

/**
 * The Cloudflare driver's options for this Worker: one `Sandbox` Durable Object (and container) per
 * runtime id, outputs in `OUTPUTS_BUCKET`, workspace backups in `BACKUP_BUCKET`.
 */
export function cloudflareDriverOptions(
  bindings: WorkerBindings,
  config: WorkerConfig,
  observe?: RuntimeObserver,
): CloudflareManagedRuntimeOptions<WorkerBindings> {
  return {
    createSandbox: async (driverBindings, runtimeId) => {
      await observe?.(runtimeId);
      return createCloudflareSdkSandbox(getSandbox(driverBindings.Sandbox, runtimeId), {
        localBackups: config.localBackups,
      });
    },
    runtimeEnvironment: SANDBOX_RUNTIME_ENVIRONMENT,
    leaseTtlMs: config.leaseTtlMs,
    outputs: { store: createR2BindingBlobStore(bindings.OUTPUTS_BUCKET) },
    ...(config.controlPlaneBaseUrl ? { controlPlaneBaseUrl: config.controlPlaneBaseUrl } : {}),
    // sandbox_active_seconds per container into the D1 usage ledger, priced by GET /v1/cost/report.
    usage: { recorder: createD1UsageLedger(bindings.DB), instanceType: config.instanceType },
  };
}
