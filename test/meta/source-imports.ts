import { readFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import ts from "typescript";
import { type WorkspaceMember, listFiles } from "./workspace.js";

/** One module specifier written in a source file. */
export interface SourceImport {
  /** Absolute path of the importing file. */
  readonly file: string;
  /** 1-based line of the specifier. */
  readonly line: number;
  readonly specifier: string;
  /** True for test files and for the helpers only tests reach. */
  readonly testOnly: boolean;
  /** True for files under the member's `bench/`: production code as far as layering goes, never published. */
  readonly bench: boolean;
}

const SOURCE_FILE = /\.(c|m)?tsx?$/;
// A `*.bench.ts` is not a test: benchmarks follow the same layering as the code they measure.
const TEST_FILE = /\.(test|spec|test-d)\.(c|m)?tsx?$/;
const TEST_DIR = /(^|\/)(__tests__|__mocks__|test|tests)\//;
const RELATIVE_CANDIDATES = ["", ".ts", ".tsx", ".mts", ".cts", "/index.ts", "/index.tsx"];

/** A test file by name or folder. */
export const isTestFile = (path: string): boolean => TEST_FILE.test(path) || TEST_DIR.test(path);

/** The folders of a member whose code is production code: its sources and its benchmarks. */
export const SOURCE_FOLDERS = ["src", "bench"] as const;

/**
 * Every `import`, `import type`, `export … from`, `import x = require()`, `import()` and
 * `typeof import()` specifier in the member's `src/` and `bench/`. TypeScript's own pre-processor finds
 * them, so specifiers inside strings, template literals and comments are not mistaken for imports.
 */
export async function scanSourceImports(member: WorkspaceMember): Promise<SourceImport[]> {
  const accept = (name: string): boolean => SOURCE_FILE.test(name);
  const files = (
    await Promise.all(SOURCE_FOLDERS.map((folder) => listFiles(join(member.dir, folder), accept)))
  ).flat();
  const benchDir = `${join(member.dir, "bench")}/`;
  const specifiers = new Map<string, { specifier: string; line: number }[]>();
  for (const file of files) {
    const text = await readFile(file, "utf8");
    const { importedFiles } = ts.preProcessFile(text, true, true);
    specifiers.set(
      file,
      importedFiles.map((imported) => ({
        specifier: imported.fileName,
        line: lineOf(text, imported.pos),
      })),
    );
  }
  const production = productionFiles(files, specifiers);
  return files.flatMap((file) =>
    (specifiers.get(file) ?? []).map(({ specifier, line }) => ({
      file,
      line,
      specifier,
      testOnly: !production.has(file),
      bench: file.startsWith(benchDir),
    })),
  );
}

/**
 * Files a build entry reaches without passing through a test. Entries are the non-test files no other
 * file imports (`index.ts`, a CLI main, a Worker script); a helper imported only by tests, such as a
 * shared port suite, is therefore test-only.
 */
function productionFiles(
  files: readonly string[],
  specifiers: ReadonlyMap<string, readonly { specifier: string }[]>,
): Set<string> {
  const known = new Set(files);
  const edges = new Map<string, string[]>();
  const imported = new Set<string>();
  for (const file of files) {
    const targets = (specifiers.get(file) ?? []).flatMap(({ specifier }) => {
      const target = resolveRelative(file, specifier, known);
      return target ? [target] : [];
    });
    edges.set(file, targets);
    for (const target of targets) imported.add(target);
  }
  const reached = new Set<string>();
  const pending = files.filter((file) => !isTestFile(file) && !imported.has(file));
  while (pending.length > 0) {
    const file = pending.pop() as string;
    if (reached.has(file) || isTestFile(file)) continue;
    reached.add(file);
    pending.push(...(edges.get(file) ?? []));
  }
  return reached;
}

/** 1-based line of a character offset. */
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

/** The source file a relative specifier points at (`./x.js` → `./x.ts`), or null when it is not one of `known`. */
export function resolveRelative(
  fromFile: string,
  specifier: string,
  known: ReadonlySet<string>,
): string | null {
  if (!specifier.startsWith(".")) return null;
  const base = resolve(dirname(fromFile), specifier);
  const stem = base.replace(/\.(c|m)?jsx?$/, "");
  for (const candidate of [
    ...RELATIVE_CANDIDATES.map((suffix) => base + suffix),
    ...RELATIVE_CANDIDATES.map((suffix) => stem + suffix),
  ]) {
    if (known.has(candidate)) return candidate;
  }
  return null;
}
