import {
  createD1SqlClient,
  createSqlFencePort,
  createSqlOrphanPort,
  createSqlSandboxJournal,
} from "@open-managed-agents/managed-runtime-host";
import type {
  RuntimeOrphanPort,
  RuntimeResourceFencePort,
  SandboxJournalPort,
} from "@open-managed-agents/runtime-resource-contract";

/**
 * The fence, orphan and sandbox journal stores, all on the `DB` D1 database (migrations/0001_runtime_resources.sql,
 * migrations/0002_sandbox_journal.sql). Spread into the host options, so every container is journaled before it starts.
 */
export function runtimeStores(database: D1Database): {
  readonly fences: RuntimeResourceFencePort;
  readonly orphans: RuntimeOrphanPort;
  readonly journal: SandboxJournalPort;
} {
  const client = createD1SqlClient(database);
  return {
    fences: createSqlFencePort({ client }),
    orphans: createSqlOrphanPort({ client }),
    journal: createSqlSandboxJournal({ client }),
  };
}
