import { readFile, readdir } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { splitSqlStatements } from "./apply-migrations.js";
import { RUNTIME_RESOURCE_MIGRATIONS } from "./migration-sources.js";

const migrationsDir = new URL("../../migrations/", import.meta.url);

describe("shipped migrations", () => {
  it("embed exactly the .sql files of migrations/, in order", async () => {
    const files = (await readdir(migrationsDir)).filter((file) => file.endsWith(".sql")).sort();
    expect(RUNTIME_RESOURCE_MIGRATIONS.map((migration) => `${migration.name}.sql`)).toEqual(files);
    for (const migration of RUNTIME_RESOURCE_MIGRATIONS) {
      expect(migration.sql, `${migration.name}.sql differs from its embedded copy`).toBe(await readFile(new URL(`${migration.name}.sql`, migrationsDir), "utf8"));
    }
  });

  it("split into statements without comments", () => {
    const statements = splitSqlStatements("-- head; with semicolon\nCREATE TABLE a (x TEXT); -- tail\n\nCREATE INDEX b ON a (x);\n");
    expect(statements).toEqual(["CREATE TABLE a (x TEXT)", "CREATE INDEX b ON a (x)"]);
    expect(splitSqlStatements(RUNTIME_RESOURCE_MIGRATIONS[0]?.sql ?? "")).toHaveLength(3);
  });
});
