import { randomUUID } from "node:crypto";
import type {} from "../../../../vitest.postgres.js";
import {
  type PostgresSqlClient,
  createPostgresSqlClient,
} from "@open-managed-agents/managed-runtime-host";
import { inject } from "vitest";

/** The run's Postgres server's superuser URL (vitest.postgres.ts); throws why there is none. */
export function postgresUrl(): string {
  const postgres = inject("postgres");
  if ("error" in postgres)
    throw new Error(`the test Postgres server did not start: ${postgres.error}`);
  return postgres.url;
}

/** A login role of its own with a password and a schema of its own: what a deployer gives one environment. */
export interface PostgresRole {
  readonly name: string;
  readonly password: string;
  /** `postgres://<role>:<password, percent-encoded>@host:port/postgres?options=-c search_path=<schema>`. */
  readonly url: string;
  /** Makes the role's new sessions read-only (`default_transaction_read_only`), or writable again. */
  setReadOnly(readOnly: boolean): Promise<void>;
  close(): Promise<void>;
}

/**
 * Creates a role and a schema it owns on the run's server. The password holds characters a URL must encode,
 * so a leak is looked for in both forms. The server trusts local logins (initdb --auth=trust): the password
 * travels in the URL as a deployer's would, unchecked.
 */
export async function createPostgresRole(admin: PostgresSqlClient): Promise<PostgresRole> {
  const name = `oma_${randomUUID().replaceAll("-", "").slice(0, 16)}`;
  const password = `pw/${randomUUID().slice(0, 8)}@secret`;
  await admin.run(`CREATE ROLE ${name} LOGIN PASSWORD '${password}'`, []);
  await admin.run(`CREATE SCHEMA ${name} AUTHORIZATION ${name}`, []);
  const url = new URL(postgresUrl());
  url.username = name;
  url.password = encodeURIComponent(password);
  url.searchParams.set("options", `-c search_path=${name}`);
  return {
    name,
    password,
    url: url.toString(),
    async setReadOnly(readOnly) {
      await admin.run(
        `ALTER ROLE ${name} SET default_transaction_read_only = ${readOnly ? "on" : "off"}`,
        [],
      );
    },
    async close() {
      await admin.run(`DROP SCHEMA ${name} CASCADE`, []);
      await admin.run(`DROP ROLE ${name}`, []);
    },
  };
}

/** A superuser client of the run's server. */
export function postgresAdmin(): PostgresSqlClient {
  return createPostgresSqlClient({
    connectionString: postgresUrl(),
    maxConnections: 2,
    idleTimeoutMs: 1_000,
  });
}
