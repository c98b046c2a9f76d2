import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import type {
  ManagedRuntimeProfile,
  RuntimeResourceScope,
  SandboxHarnessDriverPort,
} from "@open-managed-agents/runtime-resource-contract";
import { createManagedRuntimeHost } from "../src/host/create-host.js";
import { createManagedRuntimeOrphanReconciler } from "../src/orphan-reconciler.js";
import { applyMigrations } from "../src/sql/apply-migrations.js";
import { createBetterSqliteClient } from "../src/sql/better-sqlite-client.js";
import type { SqlClient } from "../src/sql/sql-client.js";
import { createSqlFencePort } from "../src/sql/sql-fence-port.js";
import { createSqlOrphanPort } from "../src/sql/sql-orphan-port.js";
import { createSqlSandboxJournal } from "../src/sql/sql-sandbox-journal.js";
import { createFakeOutputPort } from "../src/testing/fake-storage-ports.js";
import { createRecordingLogger } from "../src/testing/recording-logger.js";
import { createManualTime } from "../src/time.js";
import { createFileTreeWorld } from "./support/file-tree-world.js";
import { postgresSchemas } from "./support/postgres-schemas.js";

const profile: ManagedRuntimeProfile = {
  workspace: { requirement: "durable", preferredStrategies: ["checkpoint_restore"] },
  outputs: { requirement: "disabled" },
  runtimeCheckpoint: "disabled",
  driver: { type: "ama_worker", process: { command: "/usr/local/bin/ama-worker" } },
};
const session = { workspaceId: "wsp-1", environmentId: "env-1", sessionId: "ses-1" };
const work = (workId: string): RuntimeResourceScope => ({ ...session, workId });
/** Time-to-live of the fence of the host that dies: a new run waits for at least this long. */
const DEAD_TTL_MS = 1_000;

const schemas = postgresSchemas();
const stores: [string, () => Promise<SqlClient>][] = [
  [
    "SQLite",
    async () => {
      const client = createBetterSqliteClient(new Database(":memory:"));
      await applyMigrations(client);
      return client;
    },
  ],
  ["Postgres", () => schemas.client()],
];

describe.each(stores)(
  "a new run of a session salvages a dead run's sandbox first, over %s",
  (_, open) => {
    const setup = async () => {
      const client = await open();
      const fences = createSqlFencePort({ client });
      const journal = createSqlSandboxJournal({ client });
      const orphans = createSqlOrphanPort({ client });
      const world = createFileTreeWorld();
      const logger = createRecordingLogger();
      // Hosts on other machines share only the store; each has its own driver ports over the same provider.
      const hostOf = (
        ownerId: string,
        options: { dies?: boolean; harnessDriver?: SandboxHarnessDriverPort } = {},
      ) =>
        createManagedRuntimeHost({
          ownerId,
          leaseTtlMs: options.dies ? DEAD_TTL_MS : 120_000,
          heartbeatIntervalMs: options.dies ? DEAD_TTL_MS / 2 : 40_000,
          fences,
          orphans,
          journal,
          sandbox: world.sandbox,
          workspace: world.workspace,
          outputs: createFakeOutputPort(),
          harnessDriver: options.harnessDriver ?? world.harnessDriver,
          // A dead host's process runs nothing more: its scheduler never wakes, so it never renews its fence.
          ...(options.dies ? { scheduler: createManualTime() } : {}),
          logger,
        });
      const run = (ownerId: string, workId: string, harnessDriver?: SandboxHarnessDriverPort) =>
        hostOf(ownerId, harnessDriver ? { harnessDriver } : {}).run({
          scope: work(workId),
          profile,
        });

      // Turn 1 published revision 1; turn 2's host dies mid-turn while its worker writes on.
      void world.script("work-1", { writes: { "turn1.txt": "1" } });
      expect(await run("host-1", "work-1")).toMatchObject({ type: "completed", revision: 1 });
      const written = world.script("work-2", { writes: { "turn2.txt": "2" }, hangs: true });
      void hostOf("host-dead", { dies: true }).run({ scope: work("work-2"), profile });
      await written;
      const [dead] = await journal.listSession({ scope: work("any"), limit: 10 });
      if (!dead) throw new Error("the dead run journaled nothing");
      expect(dead).toMatchObject({ ownerId: "host-dead", startRevision: 1 });
      // The worker finishes the turn without its host, then the host's fence runs out.
      expect(world.workerWrites(dead.sandbox.runtimeId, "turn2-end.txt", "2")).toBe(true);
      const { scope, generation, ownerId } = dead;
      while (await fences.isGenerationCurrent({ scope, generation, ownerId }))
        await new Promise((resolve) => setTimeout(resolve, 50));
      return { fences, journal, orphans, world, logger, run, dead };
    };
    const salvageLines = (logger: ReturnType<typeof createRecordingLogger>) =>
      logger.entries.filter((entry) => entry.event === "sandbox.salvage");

    it("publishes the dead turn's tree before restoring, so the next turn sees its files", async () => {
      const { journal, world, logger, run, dead } = await setup();
      void world.script("work-3", { writes: { "turn3.txt": "3" } });
      const result = await run("host-2", "work-3");
      expect(result).toMatchObject({ type: "completed", revision: 3 });
      expect(world.seenBy("work-3")).toEqual(["turn1.txt", "turn2-end.txt", "turn2.txt"]);
      expect(salvageLines(logger)).toMatchObject([
        {
          level: "info",
          fields: {
            outcome: "salvaged",
            workId: "work-2",
            salvagedBy: "work-3",
            startRevision: 1,
            revision: 2,
            generation: expect.any(Number),
          },
        },
      ]);
      // The dead worker was ended before the capture and its sandbox reaped; nothing is left to reconcile.
      expect(world.workerWrites(dead.sandbox.runtimeId, "late.txt", "x")).toBe(false);
      expect(world.runtimes.get(dead.sandbox.runtimeId)?.state).toBe("stopped");
      expect(await journal.list({ limit: 10 })).toEqual([]);
      if (result.type !== "completed") throw new Error("expected completed");
      expect(world.filesOf(result.published.workspaceCheckpoint.id)).toEqual([
        "turn1.txt",
        "turn2-end.txt",
        "turn2.txt",
        "turn3.txt",
      ]);
    });

    it("publishes nothing when something newer was published meanwhile: the new run sees the newer tree", async () => {
      const { journal, orphans, fences, world, logger, run, dead } = await setup();
      // A host that cannot salvage (its driver cannot end an abandoned worker) publishes revision 2 first.
      void world.script("work-3", { writes: { "turn3.txt": "3" } });
      expect(await run("host-old", "work-3", world.harnessDriverWithoutSalvage)).toMatchObject({
        type: "completed",
        revision: 2,
      });
      expect(world.seenBy("work-3")).toEqual(["turn1.txt"]);
      void world.script("work-4", { writes: { "turn4.txt": "4" } });
      const result = await run("host-2", "work-4");
      expect(result).toMatchObject({ type: "completed", revision: 3 });
      expect(world.seenBy("work-4")).toEqual(["turn1.txt", "turn3.txt"]);
      expect(salvageLines(logger)).toMatchObject([
        { level: "info", fields: { outcome: "superseded", startRevision: 1, currentRevision: 2 } },
      ]);
      expect(world.runtimes.get(dead.sandbox.runtimeId)?.state).toBe("stopped");
      expect(await journal.list({ limit: 10 })).toEqual([]);
      // A reconciler pass afterwards finds nothing to salvage or reap.
      const reconciler = createManagedRuntimeOrphanReconciler({
        orphans,
        journal,
        fences,
        sandbox: world.sandbox,
        salvage: { endAbandoned: world.harnessDriver.endAbandoned!, workspace: world.workspace },
      });
      expect((await reconciler.runOnce({ limit: 10 })).journal).toMatchObject({
        salvaged: 0,
        superseded: 0,
        reaped: 0,
      });
    });

    it("reports the loss at error level and goes on from the last publication when the sandbox is gone", async () => {
      const { journal, world, logger, run, dead } = await setup();
      // The provider lost the dead run's sandbox before anything salvaged it.
      world.runtimes.delete(dead.sandbox.runtimeId);
      void world.script("work-3", { writes: { "turn3.txt": "3" } });
      expect(await run("host-2", "work-3")).toMatchObject({ type: "completed", revision: 2 });
      expect(world.seenBy("work-3")).toEqual(["turn1.txt"]);
      expect(salvageLines(logger)).toMatchObject([
        {
          level: "error",
          fields: {
            outcome: "failed",
            lost: true,
            code: "not_found",
            workId: "work-2",
            runtimeId: dead.sandbox.runtimeId,
            startRevision: 1,
            currentRevision: 1,
          },
        },
      ]);
      expect(await journal.list({ limit: 10 })).toEqual([]);
    });
  },
);
