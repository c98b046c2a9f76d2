import { Miniflare } from "miniflare";
import { afterAll, beforeAll } from "vitest";
import { describeFencePortSuite } from "../stores/fence-port-suite.js";
import { describeJournalPortSuite } from "../stores/journal-port-suite.js";
import { describeOrphanPortSuite } from "../stores/orphan-port-suite.js";
import { applyMigrations } from "./apply-migrations.js";
import {
  type D1DatabaseLike,
  type D1PreparedStatementLike,
  type D1ResultLike,
  createD1SqlClient,
} from "./d1-client.js";
import type { SqlClient } from "./sql-client.js";
import { createSqlFencePort } from "./sql-fence-port.js";
import { createSqlOrphanPort } from "./sql-orphan-port.js";
import { createSqlSandboxJournal } from "./sql-sandbox-journal.js";
import { describeSqlStoreSuite } from "./sql-store-suite.js";

// Real D1 inside workerd. The Worker below executes each statement on its D1 binding; the test reaches it
// with ordinary requests (`dispatchFetch`), which stay reliable on a loaded machine, unlike Miniflare's
// synchronous binding proxy. The D1 client under test talks to a binding-shaped object that forwards there.
const WORKER = `
export default {
  async fetch(request, env) {
    const { op, statements } = await request.json();
    const prepared = statements.map((statement) => env.DB.prepare(statement.sql).bind(...statement.params));
    try {
      const results = op === "batch" ? await env.DB.batch(prepared) : [await prepared[0][op]()];
      return Response.json({ results: results.map((result) => ({ results: result.results ?? [], meta: { changes: result.meta?.changes ?? 0 } })) });
    } catch (error) {
      return Response.json({ message: String(error && error.message || error) }, { status: 500 });
    }
  },
};`;

let miniflare: Miniflare | undefined;
let client: SqlClient;

interface RemoteStatement extends D1PreparedStatementLike {
  readonly sql: string;
  readonly params: readonly unknown[];
}

function remoteD1(target: Miniflare): D1DatabaseLike {
  const call = async (
    op: string,
    statements: readonly RemoteStatement[],
  ): Promise<D1ResultLike[]> => {
    const response = await target.dispatchFetch("http://d1.local/", {
      method: "POST",
      body: JSON.stringify({
        op,
        statements: statements.map(({ sql, params }) => ({ sql, params })),
      }),
    });
    const body = (await response.json()) as { results?: D1ResultLike[]; message?: string };
    if (!response.ok || !body.results)
      throw new Error(body.message ?? `D1 worker answered ${response.status}`);
    return body.results;
  };
  const statement = (sql: string, params: readonly unknown[]): RemoteStatement => ({
    sql,
    params,
    bind: (...values: unknown[]) => statement(sql, values),
    all: async () => (await call("all", [statement(sql, params)]))[0] as D1ResultLike,
    run: async () => (await call("run", [statement(sql, params)]))[0] as D1ResultLike,
  });
  return {
    prepare: (sql) => statement(sql, []),
    batch: (statements) => call("batch", statements as RemoteStatement[]),
  };
}

beforeAll(async () => {
  miniflare = new Miniflare({
    modules: true,
    script: WORKER,
    compatibilityDate: "2026-04-01",
    d1Databases: ["DB"],
    cf: false,
  });
  await miniflare.ready;
  client = createD1SqlClient(remoteD1(miniflare));
  await applyMigrations(client);
}, 60_000);

afterAll(async () => {
  await miniflare?.dispose();
});

// Tests share the database: fence cases use their own session ids, orphan and journal cases start from an empty table.
describeFencePortSuite("SQL over D1 in workerd", async ({ clock }) =>
  createSqlFencePort({ client, clock }),
);
describeOrphanPortSuite("SQL over D1 in workerd", async ({ clock }) => {
  await client.run("DELETE FROM runtime_orphans", []);
  return createSqlOrphanPort({ client, clock });
});
describeJournalPortSuite("SQL over D1 in workerd", async ({ clock }) => {
  await client.run("DELETE FROM sandbox_journal", []);
  return createSqlSandboxJournal({ client, clock });
});
describeSqlStoreSuite("D1 in workerd", async () => client);
