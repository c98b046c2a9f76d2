import { randomUUID } from "node:crypto";
import type { HostLogger, LogFields } from "@open-managed-agents/managed-runtime-host";
import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import type { LoadedConfig } from "./config/load-config.js";
import { defaultProfile } from "./config/schema.js";
import type { ServiceLogger } from "./logging/logger.js";
import { createServiceMetrics } from "./metrics/metrics.js";
import { type Composition, composeDeployment } from "./service/compose.js";
import { createWorkerClient } from "./service/run-service.js";
import { openRuntimeStore, redactStoreUrl } from "./stores/runtime-store.js";

type Env = Readonly<Record<string, string | undefined>>;

/** One dependency `--check` proved or found failing. */
export interface CheckResult {
  readonly name: "config" | "api" | "store" | "driver" | "sandbox";
  readonly ok: boolean;
  readonly detail: string;
}

const describe = (error: unknown) =>
  ManagedRuntimeError.isInstance(error)
    ? `${error.code}: ${error.message}`
    : error instanceof Error
      ? error.message
      : String(error);

/**
 * Proves each dependency in turn: the API answers the environment key (`work.stats`, which claims
 * nothing), the store takes a write, the driver loads, and a sandbox of the default profile passes the
 * readiness probe (acquired through the host on a throwaway session, then terminated). A failing
 * dependency is reported with what failed; the ones after a failed store or driver are skipped.
 */
export async function runChecks(
  loaded: LoadedConfig,
  context: { env: Env; logger: ServiceLogger },
): Promise<CheckResult[]> {
  const { config } = loaded;
  const results: CheckResult[] = [{ name: "config", ok: true, detail: "valid" }];
  const client = createWorkerClient(loaded, context.logger);
  try {
    const stats = await client.beta.environments.work.stats(
      config.environmentId,
      {},
      {
        headers: { Authorization: `Bearer ${config.environmentKey}` },
        maxRetries: 0,
        timeout: 10_000,
      },
    );
    results.push({
      name: "api",
      ok: true,
      detail: `${config.apiBaseUrl} answered the environment key (${JSON.stringify(stats)})`,
    });
  } catch (error) {
    const status = (error as { status?: number }).status;
    const detail =
      status === 401 || status === 403
        ? `${config.apiBaseUrl} refused the environment key of ${config.environmentId} (${status})`
        : status
          ? `${config.apiBaseUrl} answered ${status}`
          : `${config.apiBaseUrl} is unreachable (${context.logger.redact(describe(error))})`;
    results.push({ name: "api", ok: false, detail });
  }
  try {
    const store = await openRuntimeStore(config.store);
    try {
      await store.probeWritable();
      results.push({ name: "store", ok: true, detail: `${store.description} is writable` });
    } finally {
      await store.close();
    }
  } catch (error) {
    results.push({
      name: "store",
      ok: false,
      detail: context.logger.redact(`${redactStoreUrl(config.store)}: ${describe(error)}`),
    });
    return results;
  }
  const events: string[] = [];
  const acquired = new AbortController();
  const tap: HostLogger = {
    info: (event: string, fields: LogFields) => {
      events.push(event);
      if (event === "sandbox.acquired") acquired.abort();
      context.logger.host.info(event, fields);
    },
    warn: (event, fields) => context.logger.host.warn(event, fields),
    error: (event, fields) => context.logger.host.error(event, fields),
  };
  let composition: Composition;
  try {
    composition = await composeDeployment(config, {
      env: context.env,
      logger: tap,
      metrics: createServiceMetrics(),
    });
    results.push({
      name: "driver",
      ok: true,
      detail: `${config.driver} loaded (provider ${composition.driver.descriptor().provider})`,
    });
  } catch (error) {
    results.push({
      name: "driver",
      ok: false,
      detail: `${config.driver}: ${context.logger.redact(describe(error))}`,
    });
    return results;
  }
  try {
    const profile = defaultProfile(config);
    const scope = {
      workspaceId: config.workspaceId,
      environmentId: config.environmentId,
      sessionId: `oma-check-${randomUUID()}`,
      workId: `oma-check-${randomUUID()}`,
    };
    const host = await composition.hostFactory({ scope, profile, signal: acquired.signal });
    const result = await host.run({ scope, profile, signal: acquired.signal });
    if (events.includes("sandbox.acquired")) {
      results.push({
        name: "sandbox",
        ok: true,
        detail: `a sandbox started and found ${commandOf(
          profile,
        )} (readiness probe passed); it was terminated`,
      });
    } else {
      const error = "error" in result ? result.error : null;
      results.push({
        name: "sandbox",
        ok: false,
        detail: context.logger.redact(
          error
            ? `${error.code}: ${error.message}`
            : `the run ended ${result.type} before a sandbox started`,
        ),
      });
    }
  } catch (error) {
    results.push({ name: "sandbox", ok: false, detail: context.logger.redact(describe(error)) });
  } finally {
    await composition.close();
  }
  return results;
}

function commandOf(profile: ReturnType<typeof defaultProfile>): string {
  const driver = profile.driver as {
    process?: { command?: string };
    supervisor?: { command?: string };
  };
  return driver.process?.command ?? driver.supervisor?.command ?? "the harness";
}

/** The lines `--check` prints. */
export function formatChecks(results: readonly CheckResult[]): string {
  return `${results
    .map((result) => `${result.ok ? "ok  " : "FAIL"}  ${result.name.padEnd(8)}${result.detail}`)
    .join("\n")}\n`;
}
