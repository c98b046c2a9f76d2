import { execFile } from "node:child_process";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installProject, isolatedEnv, packAll } from "./scratch-install.js";
import {
  REPO_ROOT,
  type WorkspacePackage,
  discoverPublishablePackages,
  readPackageJson,
} from "./workspace-packages.js";

// docs/writing-a-driver.md tells a driver author to copy the template out of this repository. This does
// it the way the author would: the packages it needs come from their packed tarballs, the copy lives under
// the OS temp directory, and its own scripts (typecheck, test, build) and the CLI must pass there.
const run = promisify(execFile);
const TEMPLATE_DIR = join(REPO_ROOT, "examples", "driver-template");
const SCOPE = "@open-managed-agents/";
let workDir: string;
let project: string;

/** The publishable packages the template names and everything they depend on inside the scope. */
async function packagesTheTemplateNeeds(): Promise<WorkspacePackage[]> {
  const byName = new Map((await discoverPublishablePackages()).map((entry) => [entry.name, entry]));
  const manifest = await readPackageJson(TEMPLATE_DIR);
  const pending = Object.keys({ ...manifest.dependencies, ...manifest.devDependencies }).filter(
    (name) => name.startsWith(SCOPE),
  );
  const needed = new Map<string, WorkspacePackage>();
  while (pending.length > 0) {
    const name = pending.pop() as string;
    if (needed.has(name)) continue;
    const entry = byName.get(name);
    if (!entry) throw new Error(`the template needs ${name}, which is not a publishable package`);
    needed.set(name, entry);
    pending.push(
      ...Object.keys((await readPackageJson(entry.dir)).dependencies ?? {}).filter((dependency) =>
        dependency.startsWith(SCOPE),
      ),
    );
  }
  return [...needed.values()];
}

/** The template's manifest with each internal `workspace:*` range replaced by the packed tarball. */
function withTarballs(
  manifest: Record<string, unknown>,
  tarballs: ReadonlyMap<string, string>,
): Record<string, unknown> {
  const rewrite = (ranges: unknown) =>
    Object.fromEntries(
      Object.entries((ranges ?? {}) as Record<string, string>).map(([name, range]) => [
        name,
        tarballs.has(name) ? `file:${tarballs.get(name)}` : range,
      ]),
    );
  return {
    ...manifest,
    dependencies: rewrite(manifest.dependencies),
    devDependencies: rewrite(manifest.devDependencies),
  };
}

function pnpm(args: readonly string[], env: NodeJS.ProcessEnv = isolatedEnv()) {
  return run("pnpm", [...args], {
    cwd: project,
    env,
    maxBuffer: 32 * 1024 * 1024,
    timeout: 600_000,
  });
}

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), "openma-driver-template-"));
  const tarballs = await packAll(await packagesTheTemplateNeeds(), join(workDir, "tarballs"));
  project = join(workDir, "managed-runtime-acme");
  await cp(TEMPLATE_DIR, project, {
    recursive: true,
    filter: (source) => !/^(node_modules|dist)(\/|$)/.test(relative(TEMPLATE_DIR, source)),
  });
  const manifest = JSON.parse(await readFile(join(project, "package.json"), "utf8")) as Record<
    string,
    unknown
  >;
  await writeFile(
    join(project, "package.json"),
    JSON.stringify(withTarballs(manifest, tarballs), null, 2),
  );
  await installProject(project, tarballs);
}, 300_000);

afterAll(async () => {
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

describe("the driver template copied out of the repository", () => {
  it("holds nothing that points back into the repository", async () => {
    for (const file of ["package.json", "tsconfig.json", "tsup.config.ts", "vitest.config.ts"]) {
      expect(await readFile(join(project, file), "utf8"), file).not.toMatch(
        /\.\.\/\.\.\/|workspace:/,
      );
    }
  });

  it("typechecks", async () => {
    await pnpm(["run", "typecheck"]);
  }, 120_000);

  it("passes its own tests, the whole conformance suite among them", async () => {
    const { stdout } = await pnpm(["run", "test"]);
    const plain = stdout.replace(/\u001b\[[0-9;]*m/g, "");
    expect(plain).toMatch(/Tests\s+\d+ passed \(\d+\)/);
    expect(plain).not.toMatch(/\d+ (failed|skipped)/);
  }, 600_000);

  it("builds, and oma-conformance passes every case against the built package", async () => {
    await pnpm(["run", "build"]);
    await writeFile(
      join(project, "conformance.json"),
      JSON.stringify({ rootDir: await mkdtemp(join(workDir, "cli-")) }),
    );
    const cli = [
      "exec",
      "oma-conformance",
      "--module",
      "@open-managed-agents/driver-template",
      "--provider",
      "driver-template",
    ];
    const { stdout } = await pnpm([
      ...cli,
      "--factory-options",
      "conformance.json",
      "--timeout",
      "500",
    ]);
    expect(stdout).toMatch(/^PASSED: \d+ pass, 0 fail, 0 not-run$/m);
  }, 600_000);
});
