import { Miniflare } from "miniflare";
import { afterAll, beforeAll } from "vitest";
import { describeFencePortSuite } from "../stores/fence-port-suite.js";
import { describeOrphanPortSuite } from "../stores/orphan-port-suite.js";
import { applyMigrations } from "./apply-migrations.js";
import { createD1SqlClient } from "./d1-client.js";
import type { SqlClient } from "./sql-client.js";
import { createSqlFencePort } from "./sql-fence-port.js";
import { createSqlOrphanPort } from "./sql-orphan-port.js";
import { describeSqlStoreSuite } from "./sql-store-suite.js";

// Real D1 inside workerd: Miniflare runs a Worker with a D1 binding and hands the binding to the test.
let miniflare: Miniflare | undefined;
let client: SqlClient;

beforeAll(async () => {
  miniflare = new Miniflare({
    modules: true,
    script: "export default { fetch() { return new Response(''); } }",
    compatibilityDate: "2026-04-01",
    d1Databases: ["DB"],
    cf: false,
  });
  client = createD1SqlClient(await miniflare.getD1Database("DB"));
  await applyMigrations(client);
}, 60_000);

afterAll(async () => {
  await miniflare?.dispose();
});

// Tests share the database: fence cases use their own session ids, orphan cases start from an empty queue.
describeFencePortSuite("SQL over D1 in workerd", async ({ clock }) => createSqlFencePort({ client, clock }));
describeOrphanPortSuite("SQL over D1 in workerd", async ({ clock }) => {
  await client.run("DELETE FROM runtime_orphans", []);
  return createSqlOrphanPort({ client, clock });
});
describeSqlStoreSuite("D1 in workerd", async () => client);
