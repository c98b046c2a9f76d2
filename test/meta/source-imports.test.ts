import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type SourceImport, scanSourceImports } from "./source-imports.js";
import type { WorkspaceMember } from "./workspace.js";

// A small package on disk: the scanner the layering rules depend on must find every import form,
// ignore look-alikes in strings and comments, and tell production code from test-only helpers.
const FILES: Readonly<Record<string, string>> = {
  "src/index.ts": [
    'export * from "./feature.js";',
    'export type { Port } from "@open-managed-agents/ports";',
    '// import { ignored } from "commented-out";',
    "const text = \"import { alsoIgnored } from 'in-a-string'\";",
  ].join("\n"),
  "src/feature.ts": [
    'import {\n  value,\n} from "multi-line";',
    'const lazy = () => import("dynamic");',
    'type Loaded = typeof import("type-query");',
  ].join("\n"),
  "src/port-suite.ts": 'import { describe } from "vitest";',
  "src/feature.test.ts":
    'import "./port-suite.js";\nimport { driver } from "@open-managed-agents/host";',
};

let member: WorkspaceMember;
let found: SourceImport[];

beforeAll(async () => {
  const dir = await mkdtemp(join(tmpdir(), "oma-scan-"));
  for (const [path, text] of Object.entries(FILES)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  member = {
    name: "@open-managed-agents/fixture",
    path: "packages/fixture",
    dir,
    kind: "package",
    isPrivate: false,
    manifest: {},
  };
  found = await scanSourceImports(member);
});

afterAll(async () => {
  if (member) await rm(member.dir, { recursive: true, force: true });
});

const summary = (): string[] =>
  found.map(
    (entry) =>
      `${entry.file.slice(member.dir.length + 1)}:${entry.line} ${entry.specifier}${entry.testOnly ? " (test)" : ""}`,
  );

it("finds static, re-export, type-only, multi-line, dynamic and type-query imports, and nothing in strings or comments", () => {
  expect(summary()).toEqual([
    "src/feature.test.ts:1 ./port-suite.js (test)",
    "src/feature.test.ts:2 @open-managed-agents/host (test)",
    "src/feature.ts:3 multi-line",
    "src/feature.ts:4 dynamic",
    "src/feature.ts:5 type-query",
    "src/index.ts:1 ./feature.js",
    "src/index.ts:2 @open-managed-agents/ports",
    "src/port-suite.ts:1 vitest (test)",
  ]);
});
