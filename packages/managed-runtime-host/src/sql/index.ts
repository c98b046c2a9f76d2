export type { SqlClient, SqlRunResult, SqlStatement, SqlValue } from "./sql-client.js";
export { type BetterSqliteDatabaseLike, type BetterSqliteStatementLike, createBetterSqliteClient } from "./better-sqlite-client.js";
export { type D1DatabaseLike, type D1PreparedStatementLike, type D1ResultLike, createD1SqlClient } from "./d1-client.js";
export { RUNTIME_RESOURCE_MIGRATIONS, type SqlMigration } from "./migration-sources.js";
export { MIGRATIONS_TABLE, type ApplyMigrationsOptions, applyMigrations } from "./apply-migrations.js";
export { splitSqlStatements } from "./split-sql-statements.js";
export { type SqlFencePortOptions, createSqlFencePort } from "./sql-fence-port.js";
export { type SqlOrphanPortOptions, createSqlOrphanPort } from "./sql-orphan-port.js";
export type { SqlStoreOptions } from "./sql-store-options.js";
