import Database from "better-sqlite3";
import { describeFencePortSuite } from "../stores/fence-port-suite.js";
import { describeJournalPortSuite } from "../stores/journal-port-suite.js";
import { describeOrphanPortSuite } from "../stores/orphan-port-suite.js";
import { applyMigrations } from "./apply-migrations.js";
import { createBetterSqliteClient } from "./better-sqlite-client.js";
import { describeSqlStoreSuite } from "./sql-store-suite.js";
import { createSqlFencePort } from "./sql-fence-port.js";
import { createSqlOrphanPort } from "./sql-orphan-port.js";
import { createSqlSandboxJournal } from "./sql-sandbox-journal.js";

async function migratedClient() {
  const client = createBetterSqliteClient(new Database(":memory:"));
  await applyMigrations(client);
  return client;
}

describeFencePortSuite("SQL over better-sqlite3", async ({ clock }) =>
  createSqlFencePort({ client: await migratedClient(), clock }),
);
describeOrphanPortSuite("SQL over better-sqlite3", async ({ clock }) =>
  createSqlOrphanPort({ client: await migratedClient(), clock }),
);
describeJournalPortSuite("SQL over better-sqlite3", async ({ clock }) =>
  createSqlSandboxJournal({ client: await migratedClient(), clock }),
);
describeSqlStoreSuite("better-sqlite3", migratedClient);
