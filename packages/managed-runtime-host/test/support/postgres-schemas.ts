import type {} from "../../../../vitest.postgres.js";
import { afterAll, afterEach, inject } from "vitest";
import { applyMigrations } from "../../src/sql/apply-migrations.js";
import { type PostgresSqlClient, createPostgresSqlClient } from "../../src/sql/postgres-client.js";

/** The test server's superuser URL (see vitest.postgres.ts at the repository root); throws why there is none. */
export function postgresUrl(): string {
  const postgres = inject("postgres");
  if ("error" in postgres)
    throw new Error(`the test Postgres server did not start: ${postgres.error}`);
  return postgres.url;
}

/** `url` whose sessions work in `schema` (their search_path). */
export function inSchema(url: string, schema: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set("options", `-c search_path=${schema}`);
  return parsed.toString();
}

/** What {@link postgresSchemas} hands a test file. */
export interface PostgresSchemas {
  /** A client on a new schema, migrated unless `migrated: false`. */
  client(options?: {
    readonly migrated?: boolean;
    readonly maxConnections?: number;
  }): Promise<PostgresSqlClient>;
  /** A client of the superuser on the server's `postgres` database. */
  admin(): PostgresSqlClient;
}

/**
 * Clients on a schema of their own in the test server, each closed after the test that made it: a test gets
 * an empty database without the cost of creating one.
 */
export function postgresSchemas(): PostgresSchemas {
  const open: PostgresSqlClient[] = [];
  let admin: PostgresSqlClient | undefined;
  afterEach(async () => {
    await Promise.all(open.splice(0).map((client) => client.close()));
  });
  afterAll(async () => {
    await admin?.close();
  });
  const adminClient = () => {
    admin ??= createPostgresSqlClient({
      connectionString: postgresUrl(),
      maxConnections: 2,
      idleTimeoutMs: 1_000,
    });
    return admin;
  };
  return {
    admin: adminClient,
    async client(options = {}) {
      const schema = `test_${crypto.randomUUID().replaceAll("-", "")}`;
      await adminClient().run(`CREATE SCHEMA ${schema}`, []);
      const connectionString = inSchema(postgresUrl(), schema);
      const client = createPostgresSqlClient({
        connectionString,
        maxConnections: options.maxConnections ?? 4,
        idleTimeoutMs: 1_000,
      });
      open.push(client);
      if (options.migrated !== false) await applyMigrations(client);
      return client;
    },
  };
}
