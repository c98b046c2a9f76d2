import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { expect, it } from "vitest";
import { REPO_ROOT, discoverMembers, listFiles, repoPath } from "./workspace.js";

// `instanceof` fails across duplicate installs and, on the contract's classes, says nothing about the
// code. Production code asks `ManagedRuntimeError.hasCode(error, code)` or a class's own `isInstance`.
// Only the platform's classes and an SDK's namespaced ones (`Anthropic.APIError`) are left to `instanceof`.
const PLATFORM_ERRORS = new Set([
  "Error",
  "TypeError",
  "SyntaxError",
  "RangeError",
  "AggregateError",
  "DOMException",
]);
const ERROR_CLASS_TEST = /(?<![.\w])instanceof\s+([A-Z]\w*(?:Error|Failure))\b/g;

const isProductionSource = (name: string): boolean =>
  /\.(c|m)?tsx?$/.test(name) && !/\.test(-d)?\.tsx?$/.test(name);

it("no production source tests an error class of this repository with instanceof", async () => {
  const offences: string[] = [];
  for (const member of await discoverMembers()) {
    for (const file of await listFiles(join(member.dir, "src"), isProductionSource)) {
      const lines = (await readFile(file, "utf8")).split("\n");
      lines.forEach((line, index) => {
        for (const match of line.matchAll(ERROR_CLASS_TEST)) {
          if (!PLATFORM_ERRORS.has(match[1]!))
            offences.push(`${repoPath(file)}:${index + 1} instanceof ${match[1]}`);
        }
      });
    }
  }
  expect(
    offences,
    "use ManagedRuntimeError.hasCode(error, code) or the class's isInstance",
  ).toEqual([]);
});

it("the pattern catches a subclass test and leaves platform and namespaced classes alone", () => {
  const names = (line: string) =>
    [...line.matchAll(ERROR_CLASS_TEST)]
      .map((match) => match[1]!)
      .filter((name) => !PLATFORM_ERRORS.has(name));
  expect(names("if (error instanceof SandboxFailedError) throw error;")).toEqual([
    "SandboxFailedError",
  ]);
  expect(names("error instanceof ConformanceFailure ? a : b")).toEqual(["ConformanceFailure"]);
  expect(names("error instanceof Error && error instanceof TypeError")).toEqual([]);
  expect(names("error instanceof Anthropic.APIError")).toEqual([]);
});

it("the contract's code -> class table survives a bundler that drops modules nothing imports from (sideEffects: false)", async () => {
  // Bundled from the contract's source modules, so the bundler applies `sideEffects: false` per module:
  // a class table filled by import-time registration would be dropped with the module holding it.
  const contract = join(REPO_ROOT, "packages", "runtime-resource-contract");
  expect(JSON.parse(await readFile(join(contract, "package.json"), "utf8")).sideEffects).toBe(
    false,
  );
  const { build } = await import("esbuild");
  const dir = await mkdtemp(join(tmpdir(), "oma-error-table-"));
  try {
    const entry = join(dir, "entry.mjs");
    await writeFile(
      entry,
      `import { ManagedRuntimeError } from ${JSON.stringify(join(contract, "src", "index.ts"))};\nconsole.log(ManagedRuntimeError.fromJSON({ code: "not_found", message: "gone" }).name);\n`,
    );
    const outfile = join(dir, "bundle.mjs");
    await build({
      entryPoints: [entry],
      outfile,
      bundle: true,
      format: "esm",
      platform: "node",
      treeShaking: true,
      logLevel: "silent",
    });
    const { stdout } = await promisify(execFile)(process.execPath, [outfile]);
    expect(stdout.trim()).toBe("NotFoundError");
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}, 60_000);
