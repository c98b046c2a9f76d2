import { readFile } from "node:fs/promises";
import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { discoverMembers, listFiles, repoPath } from "./workspace.js";

// Comments say why the code is as it is now; what a benchmark measured belongs in docs, next to the run
// that measured it, where the next run can correct it. A comment sentence is a measurement when it quotes
// a quantity with a unit (a size, a duration, a percentage or a ratio) in the words of a measurement (RSS,
// heap, peak, took, grew, measured, a benchmark, "from … to …"). Sizes of the code's own constants and
// `@default` values are its specification and pass.

/**
 * Folders whose measurement comments are allowed for now, each with why. TEMPORARY: the entry fails the
 * test once its folder has none left, so it is deleted as soon as it is no longer needed.
 */
const TEMPORARY_ALLOWED_MEASUREMENT_COMMENTS: Readonly<Record<string, string>> = {};

const SOURCE = /\.(c|m)?(ts|js)$|\.sh$/;
const NUMBER = String.raw`\d(?:[\d,.]*\d)?(?:\s?[–-]\s?\d(?:[\d,.]*\d)?)?`;
const QUANTITY = new RegExp(
  String.raw`${NUMBER}\s?(?:[KMGT]i?B\b|ms\b|µs\b|%|×|s\b|seconds\b|minutes\b)`,
);
const MEASURING = new RegExp(
  [
    String.raw`\b(?:RSS|heap|garbage|peak|grew|took|measured|measurements?|bench(?:mark)?s?|faster|slower)\b`,
    String.raw`\bthroughput\b|\bwent from\b|\bsaw\b|\bagainst\b|×`,
    String.raw`\bfrom ${NUMBER}(?:\s?\S+)? to ${NUMBER}`,
  ].join("|"),
  "i",
);

/** One comment: its first line and its text lines, markers stripped; adjacent `//` or `#` lines are one. */
interface Comment {
  readonly line: number;
  readonly lines: readonly string[];
}

function lineOf(text: string, offset: number): number {
  let line = 1;
  for (
    let index = text.indexOf("\n");
    index !== -1 && index < offset;
    index = text.indexOf("\n", index + 1)
  )
    line += 1;
  return line;
}

function scriptComments(text: string): Comment[] {
  const comments: Comment[] = [];
  const scanner = ts.createScanner(
    ts.ScriptTarget.Latest,
    false,
    ts.LanguageVariant.Standard,
    text,
  );
  let previousEnd = -1;
  for (let kind = scanner.scan(); kind !== ts.SyntaxKind.EndOfFileToken; kind = scanner.scan()) {
    if (
      kind !== ts.SyntaxKind.SingleLineCommentTrivia &&
      kind !== ts.SyntaxKind.MultiLineCommentTrivia
    )
      continue;
    const line = lineOf(text, scanner.getTokenStart());
    const lines = scanner
      .getTokenText()
      .split("\n")
      .map((part) => part.replace(/^\s*(\/\*\*?|\*(?!\/)|\/\/)\s?/, "").replace(/\s*\*\/\s*$/, ""));
    const last = comments[comments.length - 1];
    if (kind === ts.SyntaxKind.SingleLineCommentTrivia && last && previousEnd === line - 1) {
      comments[comments.length - 1] = { line: last.line, lines: [...last.lines, ...lines] };
    } else {
      comments.push({ line, lines });
    }
    previousEnd = line + lines.length - 1;
  }
  return comments;
}

function shellComments(text: string): Comment[] {
  const comments: Comment[] = [];
  text.split("\n").forEach((source, index) => {
    const match = /(?:^|\s)#(?!!)\s?(.*)$/.exec(source);
    if (match === null) return;
    const last = comments[comments.length - 1];
    if (last && last.line + last.lines.length === index + 1)
      comments[comments.length - 1] = { line: last.line, lines: [...last.lines, match[1] ?? ""] };
    else comments.push({ line: index + 1, lines: [match[1] ?? ""] });
  });
  return comments;
}

/** Lines (1-based) of the sentences of `comment` that quote a measurement. */
function measurementLines(comment: Comment): number[] {
  const found: number[] = [];
  let text = "";
  const lineAt: number[] = [];
  comment.lines.forEach((source, index) => {
    // A `@default` is the code's own value, never a measurement.
    const part = `${source.replace(/@default\b.*$/, "")} `;
    text += part;
    for (let count = 0; count < part.length; count += 1) lineAt.push(comment.line + index);
  });
  let offset = 0;
  for (const sentence of text.split(/(?<=[.;])\s+(?=[A-Z`(])/)) {
    const start = text.indexOf(sentence, offset);
    offset = start + sentence.length;
    if (QUANTITY.test(sentence) && MEASURING.test(sentence))
      found.push(lineAt[start] ?? comment.line);
  }
  return found;
}

describe("measurementLines", () => {
  const comment = (...lines: string[]): Comment => ({ line: 10, lines });
  it("finds a benchmark diary and points at its sentence's first line", () => {
    expect(
      measurementLines(
        comment("Reused buffers. A streamed upload", "grew RSS by 141 MiB against 76 MiB."),
      ),
    ).toEqual([10]);
    expect(measurementLines(comment("Short.", "The walk took 0.64–0.67 s this way."))).toEqual([
      11,
    ]);
    expect(measurementLines(comment("Loading it takes a process from 54 to 72 MiB."))).toEqual([
      10,
    ]);
    expect(measurementLines(comment("It took 1.17× as long."))).toEqual([10]);
  });
  it("passes the sizes of constants and defaults", () => {
    expect(
      measurementLines(comment("Part size of uploads, at least 5 MiB. @default 8 MiB")),
    ).toEqual([]);
    expect(
      measurementLines(comment("CFS period for a CPU quota: the kernel's default, 100 ms.")),
    ).toEqual([]);
    expect(
      measurementLines(
        comment(
          "Workspaces up to this size (measured in the sandbox) use one request. @default 16 MiB",
        ),
      ),
    ).toEqual([]);
  });
});

describe("comments in every member's src/", () => {
  it("quote no measurement (those go in docs), but in the temporarily allowed folders", async () => {
    const found: string[] = [];
    for (const member of await discoverMembers()) {
      for (const file of await listFiles(join(member.dir, "src"), (name) => SOURCE.test(name))) {
        const text = await readFile(file, "utf8");
        const comments = file.endsWith(".sh") ? shellComments(text) : scriptComments(text);
        for (const comment of comments)
          for (const line of measurementLines(comment)) found.push(`${repoPath(file)}:${line}`);
      }
    }
    const allowed = Object.keys(TEMPORARY_ALLOWED_MEASUREMENT_COMMENTS);
    const offences = found.filter((place) => !allowed.some((folder) => place.startsWith(folder)));
    expect(offences, "move these measurements to docs; leave a comment that says why").toEqual([]);
    const stale = allowed.filter((folder) => !found.some((place) => place.startsWith(folder)));
    expect(
      stale,
      "delete these TEMPORARY_ALLOWED_MEASUREMENT_COMMENTS entries: nothing left to allow",
    ).toEqual([]);
  });
});
