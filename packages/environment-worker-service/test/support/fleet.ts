import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  type PostgresSqlClient,
  createPostgresSqlClient,
} from "@open-managed-agents/managed-runtime-host";
import { type PostgresCluster, startPostgresCluster } from "../../../../vitest.postgres-cluster.js";
import {
  type LogLine,
  type ServiceProcess,
  type ServiceStack,
  startServiceStack,
} from "./service-stack.js";

/** How big a fleet run is: `OMA_FLEET_FULL=1` (pnpm test:fleet) runs the full size. */
export interface FleetScale {
  readonly workers: number;
  readonly concurrency: number;
  readonly sessions: number;
  readonly turns: number;
  /** How long the faults test keeps Postgres read-only. */
  readonly readOnlyMs: number;
}

export function fleetScale(): FleetScale {
  return process.env.OMA_FLEET_FULL === "1"
    ? { workers: 4, concurrency: 2, sessions: 20, turns: 5, readOnlyMs: 30_000 }
    : { workers: 4, concurrency: 2, sessions: 4, turns: 2, readOnlyMs: 10_000 };
}

/**
 * The fence lease of every worker. Longer than the read-only window plus a renewal interval, so a run in flight
 * rides through it; a worker stopped (SIGSTOP) must outlast it before another takes the session. Each renewal
 * (the fence, then the sandbox's heartbeat through the bridge) must answer within one interval: on a loaded
 * 2-core machine running four workers and their sandboxes, 3 s was too short for the bridge.
 */
export const FLEET_LEASE_TTL_MS = 60_000;
const FENCE_HEARTBEAT_MS = 10_000;

/** One worker "machine": its own process, temporary folder, home and owner id. */
export interface FleetWorker {
  readonly name: string;
  /** The owner id its fences carry (`OMA_OWNER_ID`), one per process. */
  readonly ownerId: string;
  readonly process: ServiceProcess;
  /** Every process this worker was, oldest first (a restart after SIGKILL is a new one). */
  readonly incarnations: readonly ServiceProcess[];
}

/** One scripted session: its turns' ids and what each turn's tool call prints. */
export interface SessionPlan {
  readonly sessionId: string;
  readonly turnIds: readonly string[];
}

/** A done turn: its number in its session (from 1) and the work items the platform issued for it. */
export interface DoneTurn {
  readonly sessionId: string;
  readonly turn: number;
  readonly workIds: readonly string[];
}

export interface Fleet {
  readonly stack: ServiceStack;
  readonly postgres: PostgresCluster;
  /** A superuser client of the fleet's Postgres (for the read-only switch and out-of-band reads). */
  readonly admin: PostgresSqlClient;
  readonly workers: FleetWorker[];
  /** Starts worker `index` afresh (a new process, a new owner id, the same folders). */
  restart(index: number): Promise<FleetWorker>;
  /** Queues `turns` turns back to back on each of `sessions` new sessions. */
  queueSessions(
    sessions: number,
    turns: number,
    options?: { readonly sleepSeconds?: number },
  ): SessionPlan[];
  /** Queues one more turn on a planned session (after its other turns); returns the plan with it. */
  extendSession(plan: SessionPlan): SessionPlan;
  /** Waits until every turn of the plans is done on the control plane. */
  waitForTurns(plans: readonly SessionPlan[]): Promise<DoneTurn[]>;
  /** Every JSON line every worker process wrote. */
  lines(): LogLine[];
  close(): Promise<void>;
}

/**
 * Four workers as if on four machines: each `oma-environment-worker` a child process with its own temporary
 * folder, home and owner id, sharing only the network: one Postgres (a cluster of the test's own, so it can
 * be restarted), the local control plane and the local stack. The checkpoint store is one `file://` folder all
 * of them read, standing in for the S3 or R2 bucket a fleet shares. No network namespaces: each process
 * reaches the others over loopback.
 */
export async function startFleet(scale: FleetScale): Promise<Fleet> {
  const postgres = await startPostgresCluster();
  const admin = createPostgresSqlClient({ connectionString: postgres.url, maxConnections: 2 });
  let stack: ServiceStack;
  try {
    // Work leases of 90 s, longer than the fence lease plus a reconciler interval: a killed worker's item is
    // issued again only after the reconcilers had their turn to salvage its sandbox (with equal leases the
    // re-issued item took the expired fence first, and the salvage was superseded by a re-run of the turn).
    stack = await startServiceStack({ plane: { defaultTtlSeconds: 90 } });
  } catch (error) {
    await admin.close();
    await postgres.remove();
    throw error;
  }
  const workers: FleetWorker[] = [];
  const ownerOf = (index: number, incarnation: number) => `fleet-${index}-${incarnation}`;
  const spawnWorker = async (index: number, incarnation: number): Promise<ServiceProcess> => {
    const dir = join(stack.dir, `worker-${index}`);
    await mkdir(join(dir, "tmp"), { recursive: true });
    await mkdir(join(dir, "home"), { recursive: true });
    const name = ownerOf(index, incarnation);
    const child = stack.start({
      OMA_STORE: postgres.url,
      OMA_OWNER_ID: name,
      OMA_WORKER_ID: name,
      OMA_CONCURRENCY: String(scale.concurrency),
      OMA_LEASE_TTL_MS: String(FLEET_LEASE_TTL_MS),
      OMA_FENCE_HEARTBEAT_MS: String(FENCE_HEARTBEAT_MS),
      OMA_RECONCILE_INTERVAL_MS: "5000",
      OMA_POLL_INTERVAL_MS: "1000",
      OMA_SHUTDOWN_GRACE_MS: "60000",
      OMA_LOG_LEVEL: "debug",
      TMPDIR: join(dir, "tmp"),
      HOME: join(dir, "home"),
    });
    await child.waitFor("service.started");
    return child;
  };
  const incarnations: ServiceProcess[][] = [];
  const restart = async (index: number): Promise<FleetWorker> => {
    const list = (incarnations[index] ??= []);
    const child = await spawnWorker(index, list.length + 1);
    list.push(child);
    const worker: FleetWorker = {
      name: `worker-${index}`,
      ownerId: ownerOf(index, list.length),
      process: child,
      incarnations: list,
    };
    workers[index] = worker;
    return worker;
  };
  try {
    for (let index = 0; index < scale.workers; index += 1) await restart(index);
  } catch (error) {
    await stack.close();
    await admin.close();
    await postgres.remove();
    throw error;
  }
  return {
    stack,
    postgres,
    admin,
    workers,
    restart,
    queueSessions(sessions, turns, options = {}) {
      const plans: SessionPlan[] = [];
      for (let s = 0; s < sessions; s += 1) {
        const session = stack.plane.createSession({
          environmentId: stack.environment.id,
          title: `fleet ${s}`,
        });
        const turnIds: string[] = [];
        for (let t = 1; t <= turns; t += 1)
          turnIds.push(queueMarkedTurn(stack, session.id, t, options.sleepSeconds));
        plans.push({ sessionId: session.id, turnIds });
      }
      return plans;
    },
    extendSession(plan) {
      const turnId = queueMarkedTurn(stack, plan.sessionId, plan.turnIds.length + 1, 0);
      return { sessionId: plan.sessionId, turnIds: [...plan.turnIds, turnId] };
    },
    async waitForTurns(plans) {
      const done: DoneTurn[] = [];
      for (const plan of plans)
        for (const [index, turnId] of plan.turnIds.entries()) {
          const turn = await stack.plane.waitForTurn(plan.sessionId, turnId, {
            timeoutMs: 1_200_000,
          });
          done.push({ sessionId: plan.sessionId, turn: index + 1, workIds: turn.work_ids });
        }
      // A turn is done when its agent went idle; its item then checkpoints, publishes and reports. Settled when
      // every item is stopped on the platform and no live worker process has an item in hand.
      const settled = () =>
        done.every((turn) =>
          turn.workIds.every(
            (workId) =>
              stack.plane.workItems(stack.environment.id).find((item) => item.id === workId)
                ?.state === "stopped",
          ),
        ) &&
        incarnations
          .flat()
          .every(
            (child) =>
              child.child.exitCode !== null ||
              child.child.signalCode !== null ||
              inFlight(child.lines) === 0,
          );
      const deadline = Date.now() + 1_200_000;
      while (!settled()) {
        if (Date.now() > deadline) throw new Error("the fleet did not settle within 20 minutes");
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      return done;
    },
    lines: () => incarnations.flat().flatMap((child) => child.lines),
    async close() {
      await Promise.all(incarnations.flat().map((child) => child.stop()));
      // OMA_FLEET_LOG names a file for every worker's lines, to read after a failed run.
      if (process.env.OMA_FLEET_LOG)
        await writeFile(
          process.env.OMA_FLEET_LOG,
          incarnations
            .flatMap((list, index) =>
              list.flatMap((child, n) =>
                child.lines.map((line) => ({ worker: `${index}.${n}`, ...line })),
              ),
            )
            .map((line) => JSON.stringify(line))
            .join("\n"),
        );
      await stack.close();
      await admin.close();
      await postgres.remove();
    },
  };
}

/**
 * Queues turn `turn` of a session: its tool call prints the turn markers the workspace holds, then adds its own,
 * so what each turn found proves which earlier turns were published.
 */
function queueMarkedTurn(
  stack: ServiceStack,
  sessionId: string,
  turn: number,
  sleepSeconds = 0,
): string {
  const sleep = sleepSeconds > 0 ? `sleep ${sleepSeconds}; ` : "";
  return stack.plane.queueTurn(sessionId, {
    message: `turn ${turn}`,
    toolCalls: [
      {
        name: "bash",
        input: {
          command:
            `${sleep}printf 'turn T${turn} seen:%s:end\\n' "$(cat turns.txt 2>/dev/null | tr '\\n' ',')"; ` +
            `echo T${turn} >> turns.txt`,
        },
      },
    ],
    finalMessage: `turn ${turn} done`,
  }).id;
}

/** What the turns of a session saw: for each turn number, the turn markers its workspace held when it ran. */
export function turnsSeen(stack: ServiceStack, sessionId: string): Map<number, string[]> {
  const seen = new Map<number, string[]>();
  const text = JSON.stringify(stack.plane.transcript(sessionId));
  for (const match of text.matchAll(/turn T(\d+) seen:([^:"\\]*):end/g)) {
    const markers = (match[2] ?? "").split(",").filter((marker) => marker !== "");
    seen.set(Number(match[1]), markers);
  }
  return seen;
}

/** The `work.done` lines of every worker, in the order they were written (their `time`). */
export function doneLines(lines: readonly LogLine[]): LogLine[] {
  return lines
    .filter((line) => line.event === "work.done")
    .sort((a, b) => String(a.time).localeCompare(String(b.time)));
}

/** A line that logs a salvage, by a reconciler or by the next run of the session. */
export function isSalvageLine(line: LogLine): boolean {
  return line.event === "reconciler.salvage" || line.event === "sandbox.salvage";
}

/**
 * The salvage lines among `lines`, every outcome, in the order they were written: a reconciler's
 * (`reconciler.salvage`) and a run's that salvaged a dead run of its session before restoring (`sandbox.salvage`).
 */
export function salvageLines(lines: readonly LogLine[]): LogLine[] {
  return lines.filter(isSalvageLine).sort((a, b) => String(a.time).localeCompare(String(b.time)));
}

/** Items one worker process has claimed and not reported done, read from its own lines. */
function inFlight(lines: readonly LogLine[]): number {
  return (
    lines.filter((line) => line.event === "work.claimed").length -
    lines.filter((line) => line.event === "work.done").length
  );
}

/** The most items one worker process had claimed and not finished at once, read from its own lines in order. */
export function peakInFlight(lines: readonly LogLine[]): number {
  let running = 0;
  let peak = 0;
  for (const line of lines) {
    if (line.event === "work.claimed") running += 1;
    if (line.event === "work.done") running -= 1;
    peak = Math.max(peak, running);
  }
  return peak;
}
