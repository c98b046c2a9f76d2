// Writes the shipped migrations as files, generated from their one source (src/sql/migration-sources.ts, read
// from the build in dist/): migrations/*.sql for SQLite and D1 (`wrangler d1 migrations apply` reads this
// folder, ignoring the subfolder) and migrations/postgres/*.sql. The folder holds nothing else; never edit it.
import { mkdir, rm, writeFile } from "node:fs/promises";
import {
  POSTGRES_RUNTIME_RESOURCE_MIGRATIONS,
  RUNTIME_RESOURCE_MIGRATIONS,
} from "../dist/index.js";

const root = new URL("../migrations/", import.meta.url);
await rm(root, { recursive: true, force: true });
for (const [folder, migrations] of [
  [root, RUNTIME_RESOURCE_MIGRATIONS],
  [new URL("postgres/", root), POSTGRES_RUNTIME_RESOURCE_MIGRATIONS],
]) {
  await mkdir(folder, { recursive: true });
  for (const migration of migrations)
    await writeFile(new URL(`${migration.name}.sql`, folder), migration.sql);
}
