import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import {
  type DocBlock,
  FRAGMENT_MARKER,
  RUN_MARKER,
  docFiles,
  typescriptBlocks,
} from "./doc-blocks.js";
import { REPO_ROOT } from "./workspace.js";

const blocks = (await Promise.all((await docFiles()).map(typescriptBlocks))).flat();

/** A block for the Workers runtime (the Cloudflare SDK, `cloudflare:` modules) compiles against workers-types, not Node's. */
const isWorkerBlock = (block: DocBlock): boolean =>
  /from\s+["'](@cloudflare\/sandbox|cloudflare:)/.test(block.code);

const baseOptions: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  lib: ["lib.es2023.d.ts"],
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  strict: true,
  noUncheckedIndexedAccess: true,
  verbatimModuleSyntax: true,
  isolatedModules: true,
  skipLibCheck: true,
  noEmit: true,
  resolveJsonModule: true,
};

// Blocks compile as modules next to this workspace's node_modules, so they import the built packages
// exactly as a consumer's code does (types from each package's exports map).
const virtualDir = join(REPO_ROOT, "test", ".doc-blocks");
const virtualPath = (block: DocBlock): string =>
  join(virtualDir, `block-${blocks.indexOf(block)}.ts`);

function compile(group: readonly DocBlock[], types: string[]): ts.Program {
  const options = { ...baseOptions, types };
  const sources = new Map(
    group.map((block) => [virtualPath(block), `${block.code}\nexport {};\n`]),
  );
  const host = ts.createCompilerHost(options);
  const readFile = host.readFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  const getSourceFile = host.getSourceFile.bind(host);
  host.readFile = (path) => sources.get(path) ?? readFile(path);
  host.fileExists = (path) => sources.has(path) || fileExists(path);
  host.getSourceFile = (path, language, onError, shouldCreate) => {
    const source = sources.get(path);
    return source === undefined
      ? getSourceFile(path, language, onError, shouldCreate)
      : ts.createSourceFile(path, source, language, true);
  };
  return ts.createProgram([...sources.keys()], options, host);
}

const nodeProgram = compile(
  blocks.filter((block) => !isWorkerBlock(block)),
  ["node"],
);
const workerProgram = compile(blocks.filter(isWorkerBlock), ["@cloudflare/workers-types"]);

function diagnosticsOf(block: DocBlock): string[] {
  const program = isWorkerBlock(block) ? workerProgram : nodeProgram;
  const file = program.getSourceFile(virtualPath(block));
  if (!file) return [`${block.id}: not compiled`];
  return [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)].map(
    (diagnostic) => {
      const line =
        diagnostic.start === undefined
          ? 0
          : file.getLineAndCharacterOfPosition(diagnostic.start).line;
      // The block's first line is the line after the opening fence.
      return `${block.file}:${block.line + 1 + line}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n")}`;
    },
  );
}

it("finds the TypeScript blocks of the READMEs and docs", () => {
  expect(blocks.length).toBeGreaterThan(10);
});

it(`marks every block \`\`\`ts ${RUN_MARKER}\` (a test runs it as written) or \`\`\`ts ${FRAGMENT_MARKER}\``, () => {
  const unmarked = blocks.filter(
    (block) => block.flags.includes(RUN_MARKER) === block.flags.includes(FRAGMENT_MARKER),
  );
  expect(unmarked.map((block) => block.id)).toEqual([]);
});

// Runnable or fragment, every block compiles as a module: a fragment declares what the reader supplies.
describe.each(blocks.map((block) => [block.id, block] as const))("%s", (_id, block) => {
  it("typechecks as a complete module under strict TypeScript", () => {
    expect(diagnosticsOf(block)).toEqual([]);
  });
});

const runnable = blocks.filter((block) => block.flags.includes(RUN_MARKER));

it("runs at least the host, blob store URL and driver template examples", () => {
  expect(runnable.length).toBeGreaterThanOrEqual(3);
});

describe.each(runnable.map((block) => [block.id, block] as const))("%s", (_id, block) => {
  it("runs to completion in a fresh Node process", async () => {
    const { outputText } = ts.transpileModule(block.code, {
      compilerOptions: {
        module: ts.ModuleKind.ESNext,
        target: ts.ScriptTarget.ES2022,
        verbatimModuleSyntax: true,
      },
    });
    // Run from this workspace so the block's imports resolve to the built packages; NODE_ENV=test admits
    // the local stand-in providers the runnable examples use.
    const result = await promisify(execFile)(
      process.execPath,
      ["--input-type=module", "--eval", outputText],
      {
        cwd: join(REPO_ROOT, "test"),
        env: { ...process.env, NODE_ENV: "test" },
        timeout: 120_000,
      },
    );
    expect(result.stderr).toBe("");
  }, 150_000);
});
