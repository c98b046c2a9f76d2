import { join } from "node:path";
import {
  applyMigrations,
  createBetterSqliteClient,
  createSqlFencePort,
  createSqlOrphanPort,
} from "@open-managed-agents/managed-runtime-host";
import Database from "better-sqlite3";

/** Fence and orphan stores on a SQLite file, migrated from the shipped SQL files. */
export async function openSqliteStores(directory: string) {
  const path = join(directory, "runtime-resources.sqlite");
  const database = new Database(path);
  database.pragma("journal_mode = WAL");
  const client = createBetterSqliteClient(database);
  const applied = await applyMigrations(client);
  return {
    path,
    applied,
    fences: createSqlFencePort({ client }),
    orphans: createSqlOrphanPort({ client }),
    close: () => database.close(),
  };
}
