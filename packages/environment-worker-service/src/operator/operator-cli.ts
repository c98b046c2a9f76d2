import { createManagedRuntimeOrphanReconciler } from "@open-managed-agents/managed-runtime-host";
import { InvalidConfigError } from "@open-managed-agents/runtime-resource-contract";
import type { LoadedConfig } from "../config/load-config.js";
import { defaultProfile } from "../config/schema.js";
import type { ServiceLogger } from "../logging/logger.js";
import { createServiceMetrics } from "../metrics/metrics.js";
import { composeDeployment } from "../service/compose.js";
import { reconcilerSalvage, salvageLogFields } from "../service/reconciler-salvage.js";
import { createOperatorQueries } from "../stores/operator-queries.js";
import { openRuntimeStore } from "../stores/runtime-store.js";

type Env = Readonly<Record<string, string | undefined>>;

export const OPERATOR_USAGE = `operator commands (over the same store URL; --json prints one JSON document):
  oma-environment-worker in-flight                  sessions whose fence is held now (work in flight)
  oma-environment-worker fences <session-id>        the fence rows of a session (token-free)
  oma-environment-worker orphans [--reap]           orphaned runtimes and sandbox journal records; --reap reaps
                                                     every due one now through the driver (needs the full config)
  oma-environment-worker checkpoints <session-id> [--sweep]
                                                     the session's published checkpoint; --sweep deletes its
                                                     unreferenced checkpoint objects older than the sweep grace`;

/** What an operator command needs: the store URL always; the full config only to reap or sweep. */
export interface OperatorContext {
  readonly storeUrl: string;
  readonly loadFull: () => LoadedConfig;
  readonly env: Env;
  readonly logger: () => ServiceLogger;
  readonly json: boolean;
  readonly out: (text: string) => void;
}

/** Runs one operator command; resolves with the exit code. */
export async function runOperatorCommand(
  command: string,
  args: readonly string[],
  flags: { reap?: boolean; sweep?: boolean },
  context: OperatorContext,
): Promise<number> {
  const print = (value: unknown, lines: () => string[]) =>
    context.out(context.json ? `${JSON.stringify(value, null, 2)}\n` : `${lines().join("\n")}\n`);
  const sessionArg = () => {
    const sessionId = args[0];
    if (!sessionId)
      throw new InvalidConfigError({
        message: `${command} needs a session id`,
        context: { key: "session-id" },
      });
    return sessionId;
  };
  if (command === "orphans" && flags.reap) return reap(context, print);
  if (command === "checkpoints" && flags.sweep) return sweep(sessionArg(), context, print);
  const store = await openRuntimeStore(context.storeUrl);
  try {
    const queries = createOperatorQueries(store.client);
    switch (command) {
      case "in-flight": {
        const rows = await queries.inFlight();
        print({ inFlight: rows }, () =>
          rows.length === 0
            ? ["no work in flight"]
            : rows.map(
                (row) =>
                  `${row.sessionId}  work ${row.workId}  owner ${row.ownerId}  generation ${row.generation}  until ${row.expiresAt}`,
              ),
        );
        return 0;
      }
      case "fences": {
        const rows = await queries.fencesOf(sessionArg());
        print({ fences: rows }, () =>
          rows.length === 0
            ? ["no fence for this session"]
            : rows.map(
                (row) =>
                  `${row.workspaceId}/${row.environmentId}/${row.sessionId}  generation ${row.generation}  ${
                    row.held
                      ? `held by ${row.ownerId} for ${row.workId} until ${row.expiresAt}`
                      : "free"
                  }  revision ${row.revision}  checkpoint ${row.checkpointId ?? "-"}`,
              ),
        );
        return 0;
      }
      case "orphans": {
        const orphans = await store.orphans.list({ limit: 1000 });
        const journal = await store.journal.list({ limit: 1000 });
        print({ orphans, journal }, () => [
          `${orphans.length} orphan(s)`,
          ...orphans.map(
            (record) =>
              `  ${record.id}  ${record.scope.sessionId}  ${record.sandbox.provider}/${record.sandbox.runtimeId}  attempts ${record.attempts}  ${record.lastError}`,
          ),
          `${journal.length} journal record(s)`,
          ...journal.map(
            (record) =>
              `  ${record.id}  ${record.scope.sessionId}  ${record.sandbox.provider}/${record.sandbox.runtimeId}  generation ${record.generation}  attempts ${record.attempts}`,
          ),
        ]);
        return 0;
      }
      case "checkpoints": {
        const handles = await queries.publishedHandles(sessionArg());
        print({ published: handles }, () =>
          handles.length === 0
            ? ["no published checkpoint"]
            : handles.map(
                (handle) =>
                  `${handle.checkpointId}  ${handle.provider}  ${JSON.stringify(handle.metadata ?? {})}`,
              ),
        );
        return 0;
      }
      default:
        throw new InvalidConfigError({
          message: `unknown command ${command}`,
          context: { key: "command" },
        });
    }
  } finally {
    await store.close();
  }
}

type Print = (value: unknown, lines: () => string[]) => void;

async function reap(context: OperatorContext, print: Print): Promise<number> {
  const loaded = context.loadFull();
  const logger = context.logger();
  const composition = await composeDeployment(loaded.config, {
    env: context.env,
    logger: logger.host,
    metrics: createServiceMetrics(),
  });
  try {
    const sandboxOf = async (scope: Parameters<typeof composition.prepare>[0]) =>
      (await composition.prepare(scope, defaultProfile(loaded.config))).resources.sandbox;
    const anyScope = {
      workspaceId: loaded.config.workspaceId,
      environmentId: loaded.config.environmentId,
      sessionId: "oma-operator",
      workId: "oma-operator",
    };
    // An operator's reap is due now: no backoff between the record's last attempt and this one.
    const reconciler = createManagedRuntimeOrphanReconciler({
      orphans: composition.store.orphans,
      journal: composition.store.journal,
      fences: composition.store.fences,
      sandbox: {
        reap: async (input) => (await sandboxOf(input.scope)).reap(input),
        inspect: async (lease) => (await sandboxOf(anyScope)).inspect(lease),
      },
      salvage: reconcilerSalvage(composition, defaultProfile(loaded.config)),
      ownerId: `${loaded.config.ownerId}:salvage`,
      onSalvage: (record, outcome) =>
        logger.host[outcome.type === "failed" ? "warn" : "info"](
          "reconciler.salvage",
          salvageLogFields(record, outcome),
        ),
      backoff: { baseMs: 1, maxMs: 1, jitter: 0 },
      secrets: loaded.secrets,
    });
    const summary = await reconciler.runOnce({ limit: 1000, signal: new AbortController().signal });
    const left = await composition.store.orphans.list({ limit: 1000 });
    print({ summary, orphansLeft: left.length }, () => [
      `reaped ${summary.reaped}, failed ${summary.failed}, given up ${
        summary.givenUp
      }; journal ${JSON.stringify(summary.journal ?? {})}`,
      `${left.length} orphan(s) left`,
    ]);
    return summary.failed > 0 ? 1 : 0;
  } finally {
    await composition.close();
  }
}

async function sweep(sessionId: string, context: OperatorContext, print: Print): Promise<number> {
  const loaded = context.loadFull();
  const composition = await composeDeployment(loaded.config, {
    env: context.env,
    logger: context.logger().host,
    metrics: createServiceMetrics(),
  });
  try {
    if (!composition.sweep) {
      throw new InvalidConfigError({
        message: `the driver ${loaded.config.driver} exports no checkpoint sweep, or no checkpoint store is configured (OMA_CHECKPOINT_STORE)`,
        context: { key: "checkpointStore" },
      });
    }
    const published = await createOperatorQueries(composition.store.client).publishedHandles(
      sessionId,
    );
    const result = await composition.sweep({
      sessionId,
      published,
      graceMs: loaded.config.sweepGraceMs,
    });
    print({ sessionId, ...result }, () => [
      `swept ${sessionId}: deleted ${result.deleted}, kept ${result.kept} (published checkpoints: ${published.length})`,
    ]);
    return 0;
  } finally {
    await composition.close();
  }
}
