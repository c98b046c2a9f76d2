import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { RUNTIME_RESOURCE_MIGRATIONS } from "@open-managed-agents/managed-runtime-host";
import { describe, expect, it } from "vitest";
import { APP_DIR, appFile, installedPackage } from "./artefacts.js";

/** The app's own migrations, after the host's. */
const APP_MIGRATIONS = [
  "0002_work_items.sql",
  "0003_usage_records.sql",
  "0004_environment_work.sql",
];

describe("D1 migrations (migrations/, applied by `wrangler d1 migrations apply`)", () => {
  it("carry each migration the host ships, byte for byte, under the same name", async () => {
    const host = await installedPackage("@open-managed-agents/managed-runtime-host");
    expect(RUNTIME_RESOURCE_MIGRATIONS.length).toBeGreaterThan(0);
    for (const migration of RUNTIME_RESOURCE_MIGRATIONS) {
      // The host's one source of its schema, and the file its build generates from it.
      expect(await appFile(`migrations/${migration.name}.sql`)).toBe(migration.sql);
      expect(await readFile(join(host.dir, "migrations", `${migration.name}.sql`), "utf8")).toBe(
        migration.sql,
      );
    }
  });

  it("hold the host's migrations first and then the app's own, with no other file", async () => {
    const files = (await readdir(join(APP_DIR, "migrations"))).sort();
    expect(files).toEqual([
      ...RUNTIME_RESOURCE_MIGRATIONS.map((migration) => `${migration.name}.sql`),
      ...APP_MIGRATIONS,
    ]);
  });
});
