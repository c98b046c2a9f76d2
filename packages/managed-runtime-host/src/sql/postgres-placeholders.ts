import { InvalidRequestError } from "@open-managed-agents/runtime-resource-contract";

/**
 * Rewrites the `?` placeholders of a statement as Postgres' `$1`, `$2`, … A `?` inside a string literal
 * (`'…'`, `''` for a quote), a quoted identifier (`"…"`), a dollar-quoted string (`$tag$…$tag$`) or a comment
 * stays as it is. The count must match `count`, the number of bound values. Escape strings (`E'…'`) are not
 * read: the stores' statements hold none.
 */
export function numberPlaceholders(sql: string, count: number): string {
  let out = "";
  let index = 0;
  let next = 1;
  while (index < sql.length) {
    const char = sql[index] as string;
    const end = skippedEnd(sql, index);
    if (end > index) {
      out += sql.slice(index, end);
      index = end;
    } else if (char === "?") {
      out += `$${next}`;
      next += 1;
      index += 1;
    } else {
      out += char;
      index += 1;
    }
  }
  if (next - 1 !== count) {
    const message = `statement has ${next - 1} placeholders for ${count} bound values`;
    throw new InvalidRequestError({ message, context: { path: "params" } });
  }
  return out;
}

/** End of the literal, identifier or comment starting at `start`, or `start` when none starts there. */
function skippedEnd(sql: string, start: number): number {
  const char = sql[start];
  const following = sql[start + 1];
  if (char === "-" && following === "-") {
    const newline = sql.indexOf("\n", start);
    return newline === -1 ? sql.length : newline;
  }
  if (char === "/" && following === "*") return closedAt(sql, "*/", start + 2, start);
  if (char === "'" || char === '"') {
    for (let index = start + 1; index < sql.length; index += 1) {
      if (sql[index] !== char) continue;
      if (sql[index + 1] === char) {
        index += 1;
        continue;
      }
      return index + 1;
    }
    return sql.length;
  }
  if (char === "$") {
    const tag = /^\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(start))?.[0];
    // `$1` is a numbered parameter, not a tag; a tag never starts with a digit.
    if (tag !== undefined) return closedAt(sql, tag, start + tag.length, start);
  }
  return start;
}

function closedAt(sql: string, close: string, from: number, start: number): number {
  const at = sql.indexOf(close, from);
  return at === -1 ? Math.max(sql.length, start + 1) : at + close.length;
}
