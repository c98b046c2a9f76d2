import { postgresSchemas } from "../../test/support/postgres-schemas.js";
import { describeFencePortSuite } from "../stores/fence-port-suite.js";
import { describeJournalPortSuite } from "../stores/journal-port-suite.js";
import { describeOrphanPortSuite } from "../stores/orphan-port-suite.js";
import { createSqlFencePort } from "./sql-fence-port.js";
import { createSqlOrphanPort } from "./sql-orphan-port.js";
import { createSqlSandboxJournal } from "./sql-sandbox-journal.js";
import { describeSqlStoreSuite } from "./sql-store-suite.js";

// A real Postgres server started for the test run (vitest.postgres.ts at the repository root); every test gets a
// schema of its own, migrated with the shipped Postgres migrations.
const schemas = postgresSchemas();

describeFencePortSuite("SQL over Postgres", async ({ clock }) =>
  createSqlFencePort({ client: await schemas.client(), clock }),
);
describeOrphanPortSuite("SQL over Postgres", async ({ clock }) =>
  createSqlOrphanPort({ client: await schemas.client(), clock }),
);
describeJournalPortSuite("SQL over Postgres", async ({ clock }) =>
  createSqlSandboxJournal({ client: await schemas.client(), clock }),
);
describeSqlStoreSuite("Postgres", () => schemas.client());
