import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { REPO_ROOT, listFiles, repoPath } from "./workspace.js";

/**
 * Info-string words: every TypeScript block carries one. `run`: a test executes it as written in a fresh Node
 * process. `fragment`: not runnable as written (it needs an account, a server or inputs the reader supplies,
 * which it declares). Both kinds typecheck as complete modules.
 */
export const RUN_MARKER = "run";
export const FRAGMENT_MARKER = "fragment";
const TYPESCRIPT = new Set(["ts", "typescript", "mts", "tsx"]);

/** One fenced TypeScript block of a Markdown document. */
export interface DocBlock {
  /** Repo-relative Markdown file. */
  readonly file: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  /** Words of the info string after the language, e.g. `["fragment"]`. */
  readonly flags: readonly string[];
  readonly code: string;
  /** `file:line`, for names and failure messages. */
  readonly id: string;
}

/** The documents whose TypeScript blocks must be complete: the root README, package, app and example READMEs, docs. */
export async function docFiles(): Promise<string[]> {
  const readmes = await Promise.all(
    ["packages", "apps", "examples"].map((folder) =>
      listFiles(join(REPO_ROOT, folder), (name) => name === "README.md"),
    ),
  );
  const docs = await listFiles(join(REPO_ROOT, "docs"), (name) => name.endsWith(".md"));
  // listFiles recurses; a README deeper than <folder>/<member>/README.md (fixtures, vendored code) is not a member's.
  const memberReadmes = readmes.flat().filter((path) => repoPath(path).split("/").length === 3);
  return [join(REPO_ROOT, "README.md"), ...memberReadmes, ...docs];
}

/** Every fenced TypeScript block of `path` (outside other fences), with its position. */
export async function typescriptBlocks(path: string): Promise<DocBlock[]> {
  const lines = (await readFile(path, "utf8")).split(/\r?\n/);
  const blocks: DocBlock[] = [];
  for (let index = 0; index < lines.length; index += 1) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)\s*(.*)$/.exec(lines[index] ?? "");
    if (!open) continue;
    const [, indent = "", fence = "", language = "", rest = ""] = open;
    let end = index + 1;
    while (
      end < lines.length &&
      !new RegExp(`^\\s*${fence[0] === "`" ? "`" : "~"}{${fence.length},}\\s*$`).test(
        lines[end] ?? "",
      )
    )
      end += 1;
    if (TYPESCRIPT.has(language.toLowerCase())) {
      const code = lines
        .slice(index + 1, end)
        .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line))
        .join("\n");
      const file = repoPath(path);
      blocks.push({
        file,
        line: index + 1,
        flags: rest.split(/\s+/).filter((flag) => flag !== ""),
        code,
        id: `${file}:${index + 1}`,
      });
    }
    index = end;
  }
  return blocks;
}
