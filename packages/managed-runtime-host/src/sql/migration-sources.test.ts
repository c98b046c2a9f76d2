import { readFile, readdir } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { splitSqlStatements } from "./split-sql-statements.js";
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
  });

  it("split every shipped migration into its statements, each one that SQLite can prepare", async () => {
    const { default: Database } = await import("better-sqlite3");
    const database = new Database(":memory:");
    const statements = RUNTIME_RESOURCE_MIGRATIONS.flatMap((migration) => splitSqlStatements(migration.sql));
    expect(statements.map((statement) => statement.split(/\s+/).slice(0, 6).join(" "))).toEqual([
      "CREATE TABLE IF NOT EXISTS runtime_resource_fences",
      "CREATE TABLE IF NOT EXISTS runtime_orphans",
      "CREATE INDEX IF NOT EXISTS runtime_orphans_by_age",
      "CREATE TABLE IF NOT EXISTS sandbox_journal",
      "CREATE INDEX IF NOT EXISTS sandbox_journal_by_age",
    ]);
    for (const statement of statements) database.prepare(statement).run();
    database.close();
  });
});

describe("splitSqlStatements", () => {
  it.each([
    ["a ; inside a string literal", "INSERT INTO t VALUES ('a;b'); SELECT 1", ["INSERT INTO t VALUES ('a;b')", "SELECT 1"]],
    ["a -- inside a string literal", "INSERT INTO t VALUES ('a -- b');", ["INSERT INTO t VALUES ('a -- b')"]],
    ["doubled quotes in a string literal", "INSERT INTO t VALUES ('it''s; fine'); SELECT 2", ["INSERT INTO t VALUES ('it''s; fine')", "SELECT 2"]],
    ["a ; and -- in a quoted identifier", 'CREATE TABLE "a;--b" ("c""d;" TEXT); SELECT 3', ['CREATE TABLE "a;--b" ("c""d;" TEXT)', "SELECT 3"]],
    ["backtick and bracket identifiers", "SELECT `x;y`, [p;q] FROM t; SELECT 4", ["SELECT `x;y`, [p;q] FROM t", "SELECT 4"]],
    ["a line comment holding a quote", "SELECT 5; -- it's a comment; really\nSELECT 6", ["SELECT 5", "SELECT 6"]],
    ["a block comment holding ; and a quote", "SELECT /* don't; split */ 7; SELECT 8", ["SELECT   7", "SELECT 8"]],
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
    expect(() => splitSqlStatements(sql)).toThrowError(expect.objectContaining({ code: "invalid_config" }));
  });
});
