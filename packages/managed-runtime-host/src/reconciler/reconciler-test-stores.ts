// Test support for the reconciler's cases: the stores a reconciler reads, in memory and over real SQLite.
import Database from "better-sqlite3";
import type {
  RuntimeResourceFencePort,
  SandboxJournalPort,
} from "@open-managed-agents/runtime-resource-contract";
import { applyMigrations } from "../sql/apply-migrations.js";
import { createBetterSqliteClient } from "../sql/better-sqlite-client.js";
import { createSqlFencePort } from "../sql/sql-fence-port.js";
import { createSqlOrphanPort } from "../sql/sql-orphan-port.js";
import { createSqlSandboxJournal } from "../sql/sql-sandbox-journal.js";
import { createMemoryFencePort } from "../stores/memory-fence-port.js";
import { createMemoryOrphanPort } from "../stores/memory-orphan-port.js";
import { createMemorySandboxJournal } from "../stores/memory-sandbox-journal.js";
import type { ManualTime } from "../time.js";

export type ReconcilerStores = {
  fences: RuntimeResourceFencePort;
  journal: SandboxJournalPort;
  orphans: ReturnType<typeof createMemoryOrphanPort>;
};

/** Each store a reconciler case runs over, by name, for `describe.each`. */
export const reconcilerStores: [string, (clock: ManualTime) => Promise<ReconcilerStores>][] = [
  [
    "memory",
    async (clock) => ({
      fences: createMemoryFencePort({ clock }),
      journal: createMemorySandboxJournal({ clock }),
      orphans: createMemoryOrphanPort({ clock }),
    }),
  ],
  [
    "SQL over better-sqlite3",
    async (clock) => {
      const client = createBetterSqliteClient(new Database(":memory:"));
      await applyMigrations(client);
      return {
        fences: createSqlFencePort({ client, clock }),
        journal: createSqlSandboxJournal({ client, clock }),
        orphans: createSqlOrphanPort({ client, clock }),
      };
    },
  ],
];
