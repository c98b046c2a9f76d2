export type { SqlClient, SqlDialect, SqlRunResult, SqlStatement, SqlValue } from "./sql-client.js";
export {
  type BetterSqliteDatabaseLike,
  type BetterSqliteStatementLike,
  createBetterSqliteClient,
} from "./better-sqlite-client.js";
export {
  type D1DatabaseLike,
  type D1PreparedStatementLike,
  type D1ResultLike,
  createD1SqlClient,
} from "./d1-client.js";
export {
  type PostgresSqlClient,
  type PostgresSqlClientOptions,
  createPostgresSqlClient,
} from "./postgres-client.js";
export {
  POSTGRES_RUNTIME_RESOURCE_MIGRATIONS,
  RUNTIME_RESOURCE_MIGRATIONS,
  type SqlMigration,
  runtimeResourceMigrations,
} from "./migration-sources.js";
export {
  MIGRATIONS_TABLE,
  type ApplyMigrationsOptions,
  applyMigrations,
} from "./apply-migrations.js";
export { splitSqlStatements } from "./split-sql-statements.js";
export { type SqlFencePortOptions, createSqlFencePort } from "./sql-fence-port.js";
export { type SqlOrphanPortOptions, createSqlOrphanPort } from "./sql-orphan-port.js";
export { type SqlSandboxJournalOptions, createSqlSandboxJournal } from "./sql-sandbox-journal.js";
export type { SqlStoreOptions } from "./sql-store-options.js";
