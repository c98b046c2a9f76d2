import { InvalidConfigError } from "@open-managed-agents/runtime-resource-contract";

/** Opening character of a quoted token and the character that closes it. */
const QUOTES: Readonly<Record<string, string>> = { "'": "'", '"': '"', "`": "`", "[": "]" };

/**
 * Splits migration text into statements the way SQLite's tokenizer reads it: a `;` ends a statement
 * only outside string literals (`'…'`, with `''` for a quote), quoted identifiers (`"…"`, `` `…` ``,
 * `[…]`) and comments. `--` line comments and `/* … *\/` block comments are dropped (a block comment
 * becomes one space, so it still separates tokens); blank statements are dropped. An unterminated
 * literal, identifier or block comment is `invalid_config`. Trigger bodies (`BEGIN … END` holding `;`)
 * are not supported: each `;` there would end a statement.
 */
export function splitSqlStatements(sql: string): string[] {
  const statements: string[] = [];
  let current = "";
  let index = 0;
  const flush = () => {
    const statement = current.trim();
    if (statement.length > 0) statements.push(statement);
    current = "";
  };
  while (index < sql.length) {
    const char = sql[index] as string;
    const next = sql[index + 1];
    if (char === "-" && next === "-") {
      const newline = sql.indexOf("\n", index);
      index = newline === -1 ? sql.length : newline;
    } else if (char === "/" && next === "*") {
      const close = sql.indexOf("*/", index + 2);
      if (close === -1) throw unterminated("block comment", index);
      current += " ";
      index = close + 2;
    } else if (char in QUOTES) {
      const end = quotedEnd(sql, index, QUOTES[char] as string);
      current += sql.slice(index, end);
      index = end;
    } else if (char === ";") {
      flush();
      index += 1;
    } else {
      current += char;
      index += 1;
    }
  }
  flush();
  return statements;
}

/** Index just past the quoted token opening at `start`; a doubled closing character is part of it. */
function quotedEnd(sql: string, start: number, close: string): number {
  for (let index = start + 1; index < sql.length; index += 1) {
    if (sql[index] !== close) continue;
    // `[…]` has no escape; `''`, `""` and ``` `` ``` stand for one quote character.
    if (close !== "]" && sql[index + 1] === close) {
      index += 1;
      continue;
    }
    return index + 1;
  }
  throw unterminated(close === "'" ? "string literal" : "quoted identifier", start);
}

function unterminated(what: string, offset: number): InvalidConfigError {
  return new InvalidConfigError({
    message: `migration SQL has an unterminated ${what} at offset ${offset}`,
    context: { path: "migrations.sql", offset },
  });
}
