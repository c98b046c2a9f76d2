import { readFile, readdir } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { splitSqlStatements } from "./split-sql-statements.js";
import {
  POSTGRES_RUNTIME_RESOURCE_MIGRATIONS,
  RUNTIME_RESOURCE_MIGRATIONS,
} from "./migration-sources.js";

const migrationsDir = new URL("../../migrations/", import.meta.url);

describe("shipped migrations", () => {
  it.each([
    ["SQLite and D1", migrationsDir, RUNTIME_RESOURCE_MIGRATIONS],
    ["Postgres", new URL("postgres/", migrationsDir), POSTGRES_RUNTIME_RESOURCE_MIGRATIONS],
  ] as const)(
    "are built into the %s .sql files exactly, in order",
    async (_dialect, folder, migrations) => {
      const files = (await readdir(folder)).filter((file) => file.endsWith(".sql")).sort();
      expect(migrations.map((migration) => `${migration.name}.sql`)).toEqual(files);
      for (const migration of migrations) {
        expect(
          await readFile(new URL(`${migration.name}.sql`, folder), "utf8"),
          `${migration.name}.sql differs from its source`,
        ).toBe(migration.sql);
      }
    },
  );

  it("differ between dialects only in integer width and the queues' insertion-order column", () => {
    const normalized = (sql: string) =>
      sql
        .replace("the dialect SQLite and Cloudflare D1 share", "DIALECT")
        .replace("Postgres' dialect", "DIALECT")
        .replaceAll("  rowid BIGINT GENERATED ALWAYS AS IDENTITY,\n", "")
        .replaceAll(" BIGINT ", " INTEGER ")
        .replaceAll(" BIGINT;", " INTEGER;");
    expect(POSTGRES_RUNTIME_RESOURCE_MIGRATIONS.map((migration) => migration.name)).toEqual(
      RUNTIME_RESOURCE_MIGRATIONS.map((migration) => migration.name),
    );
    POSTGRES_RUNTIME_RESOURCE_MIGRATIONS.forEach((migration, index) => {
      expect(migration.sql).toMatch(/ BIGINT[ ;]/);
      expect(normalized(migration.sql)).toBe(
        normalized(RUNTIME_RESOURCE_MIGRATIONS[index]?.sql ?? ""),
      );
    });
  });

  it("split into statements without comments", () => {
    const statements = splitSqlStatements(
      "-- head; with semicolon\nCREATE TABLE a (x TEXT); -- tail\n\nCREATE INDEX b ON a (x);\n",
    );
    expect(statements).toEqual(["CREATE TABLE a (x TEXT)", "CREATE INDEX b ON a (x)"]);
  });

  it("split every shipped migration into its statements, each one that SQLite can prepare", async () => {
    const { default: Database } = await import("better-sqlite3");
    const database = new Database(":memory:");
    const statements = RUNTIME_RESOURCE_MIGRATIONS.flatMap((migration) =>
      splitSqlStatements(migration.sql),
    );
    expect(statements.map((statement) => statement.split(/\s+/).slice(0, 6).join(" "))).toEqual([
      "CREATE TABLE IF NOT EXISTS runtime_resource_fences",
      "CREATE TABLE IF NOT EXISTS runtime_orphans",
      "CREATE INDEX IF NOT EXISTS runtime_orphans_by_age",
      "CREATE TABLE IF NOT EXISTS sandbox_journal",
      "CREATE INDEX IF NOT EXISTS sandbox_journal_by_age",
      "ALTER TABLE sandbox_journal ADD COLUMN start_revision",
    ]);
    for (const statement of statements) database.prepare(statement).run();
    database.close();
  });
});

describe("splitSqlStatements", () => {
  it.each([
    [
      "a ; inside a string literal",
      "INSERT INTO t VALUES ('a;b'); SELECT 1",
      ["INSERT INTO t VALUES ('a;b')", "SELECT 1"],
    ],
    [
      "a -- inside a string literal",
      "INSERT INTO t VALUES ('a -- b');",
      ["INSERT INTO t VALUES ('a -- b')"],
    ],
    [
      "doubled quotes in a string literal",
      "INSERT INTO t VALUES ('it''s; fine'); SELECT 2",
      ["INSERT INTO t VALUES ('it''s; fine')", "SELECT 2"],
    ],
    [
      "a ; and -- in a quoted identifier",
      'CREATE TABLE "a;--b" ("c""d;" TEXT); SELECT 3',
      ['CREATE TABLE "a;--b" ("c""d;" TEXT)', "SELECT 3"],
    ],
    [
      "backtick and bracket identifiers",
      "SELECT `x;y`, [p;q] FROM t; SELECT 4",
      ["SELECT `x;y`, [p;q] FROM t", "SELECT 4"],
    ],
    [
      "a line comment holding a quote",
      "SELECT 5; -- it's a comment; really\nSELECT 6",
      ["SELECT 5", "SELECT 6"],
    ],
    [
      "a block comment holding ; and a quote",
      "SELECT /* don't; split */ 7; SELECT 8",
      ["SELECT   7", "SELECT 8"],
    ],
    ["a line comment at the end without newline", "SELECT 9 -- done", ["SELECT 9"]],
    ["only comments and blanks", "-- nothing\n  /* here */ ;;\n", []],
  ])("handles %s", (_name, sql, expected) => {
    expect(splitSqlStatements(sql)).toEqual(expected);
  });

  it.each([
    ["an unterminated string literal", "INSERT INTO t VALUES ('oops); SELECT 1"],
    ["an unterminated quoted identifier", 'SELECT "oops FROM t'],
    ["an unterminated block comment", "SELECT 1; /* never closed"],
  ])("refuses %s with invalid_config", (_name, sql) => {
    expect(() => splitSqlStatements(sql)).toThrowError(
      expect.objectContaining({ code: "invalid_config" }),
    );
  });
});
