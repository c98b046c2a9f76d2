import {
  type ManagedRuntimeHost,
  createManagedRuntimeHost,
  createManagedRuntimeProviderRegistry,
} from "@open-managed-agents/managed-runtime-host";
import {
  CLOUDFLARE_PROVIDER,
  createCloudflareManagedRuntimeDriver,
} from "@open-managed-agents/managed-runtime-cloudflare";
import type {
  ManagedRuntimeProfile,
  RuntimeResourceScope,
} from "@open-managed-agents/runtime-resource-contract";
import type { WorkerContext } from "../config.js";
import { createConsoleLogger } from "../logger.js";
import { type RuntimeObserver, cloudflareDriverOptions } from "../runtime/driver-options.js";
import { runtimeStores } from "../runtime/stores.js";
import type { WorkItem } from "./work-item.js";
import { type WorkOutcome, errorJSON, outcomeOf } from "./work-outcome.js";

/** Options of {@link runWorkItem}. */
export interface RunWorkItemOptions {
  /** The host instance: written into the fence and into orphan records. */
  readonly ownerId: string;
  /** Sees every runtime id the driver opens (the Worker records it on the work item). */
  readonly observeRuntime?: RuntimeObserver;
  readonly signal?: AbortSignal;
}

/**
 * Runs one work item: the Cloudflare driver admitted by the registry, then the fenced host transaction
 * over D1 fences and orphans. Never rejects: a refusal or failure before the transaction is a `failed` outcome.
 */
export async function runWorkItem(
  context: WorkerContext,
  item: WorkItem,
  options: RunWorkItemOptions,
): Promise<WorkOutcome> {
  try {
    const config = context.config();
    const scope: RuntimeResourceScope = {
      workspaceId: config.workspaceId,
      environmentId: config.environmentId,
      sessionId: item.sessionId,
      workId: item.workId,
    };
    const host = await createWorkHost(context, {
      scope,
      profile: item.profile,
      ownerId: options.ownerId,
      ...(options.observeRuntime ? { observeRuntime: options.observeRuntime } : {}),
    });
    return outcomeOf(
      await host.run({
        scope,
        profile: item.profile,
        ...(options.signal ? { signal: options.signal } : {}),
      }),
    );
  } catch (error) {
    return { type: "failed", error: errorJSON(error), cleanupErrors: [] };
  }
}

/** What {@link createWorkHost} needs for one item. */
export interface WorkHostInput {
  readonly scope: RuntimeResourceScope;
  readonly profile: ManagedRuntimeProfile;
  /** The host instance: written into the fence and into orphan records. */
  readonly ownerId: string;
  readonly observeRuntime?: RuntimeObserver;
}

/**
 * The fenced host for one item: the Cloudflare driver admitted by the registry for the item's profile,
 * over the D1 fence and orphan stores. A profile the driver cannot serve is refused here, typed.
 */
export async function createWorkHost(
  context: WorkerContext,
  input: WorkHostInput,
): Promise<ManagedRuntimeHost> {
  const config = context.config();
  const { bindings } = context;
  const driver = createCloudflareManagedRuntimeDriver(
    bindings,
    cloudflareDriverOptions(bindings, config, input.observeRuntime),
  );
  const registry = createManagedRuntimeProviderRegistry({ drivers: [driver] });
  const { resources } = await registry.prepare({
    provider: CLOUDFLARE_PROVIDER,
    placement: "in_process",
    scope: input.scope,
    profile: input.profile,
    providerConfig: {},
  });
  return createManagedRuntimeHost({
    ownerId: input.ownerId,
    leaseTtlMs: config.leaseTtlMs,
    heartbeatIntervalMs: config.heartbeatIntervalMs,
    ...runtimeStores(bindings.DB),
    ...resources,
    logger: createConsoleLogger(config.logLevel),
  });
}
