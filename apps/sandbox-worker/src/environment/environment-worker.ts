import type { BetaSelfHostedWork } from "@anthropic-ai/sdk/resources/beta/environments/work";
import {
  type ManagedEnvironmentWorker,
  createManagedEnvironmentWorker,
} from "@open-managed-agents/managed-environment-worker";
import { InvalidConfigError } from "@open-managed-agents/runtime-resource-contract";
import type { WorkerContext } from "../config.js";
import { createConsoleLogger } from "../logger.js";
import type { RuntimeObserver } from "../runtime/driver-options.js";
import { createWorkHost } from "../work/run-work-item.js";
import { createManagedAgentsClient } from "./client.js";

/** What one claimed item's environment worker needs besides the Worker's environment. */
export interface ClaimedItemWorkerOptions {
  /** The host instance: written into the fence and into orphan records. */
  readonly ownerId: string;
  readonly observeRuntime?: RuntimeObserver;
}

/**
 * The environment worker that runs one claimed item inside its Durable Object: the official SDK client,
 * the `ENVIRONMENT_PROFILE` profile from `PROFILES`, and a host over the Cloudflare driver and D1 per item.
 */
export function createClaimedItemWorker(
  context: WorkerContext,
  options: ClaimedItemWorkerOptions,
): ManagedEnvironmentWorker {
  const config = context.config();
  const settings = context.environment();
  const profile = Object.hasOwn(config.profiles, settings.profileName)
    ? config.profiles[settings.profileName]
    : undefined;
  if (profile === undefined) {
    throw new InvalidConfigError({
      message: `ENVIRONMENT_PROFILE names "${settings.profileName}", which PROFILES does not define`,
      context: { field: "ENVIRONMENT_PROFILE" },
    });
  }
  return createManagedEnvironmentWorker({
    client: createManagedAgentsClient(settings),
    environmentId: config.environmentId,
    environmentKey: settings.environmentKey,
    workspaceId: config.workspaceId,
    apiBaseUrl: settings.baseUrl,
    profileFor: () => profile,
    host: ({ scope, profile: itemProfile }) =>
      createWorkHost(context, {
        scope,
        profile: itemProfile,
        ownerId: options.ownerId,
        ...(options.observeRuntime ? { observeRuntime: options.observeRuntime } : {}),
      }),
    logger: createConsoleLogger(config.logLevel),
  });
}

/** The fields of a claimed item the Worker keeps anywhere: never its secret. */
export interface ClaimedItemRef {
  readonly workId: string;
  readonly sessionId: string | null;
}

/** The persistable part of a claimed item. */
export function claimedItemRef(work: BetaSelfHostedWork): ClaimedItemRef {
  return { workId: work.id, sessionId: work.data.type === "session" ? work.data.id : null };
}
