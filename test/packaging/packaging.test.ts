import { execFile } from "node:child_process";
import { readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { importEntry } from "./import-entry.js";
import {
  type ScratchInstall,
  installTarballs,
  isolatedEnv,
  packAndInstall,
} from "./scratch-install.js";
import {
  type ExportEntry,
  type WorkspacePackage,
  discoverPublishablePackages,
  readPackageJson,
} from "./workspace-packages.js";

const packages = await discoverPublishablePackages();
let install: ScratchInstall;

beforeAll(async () => {
  install = await packAndInstall(packages);
});

afterAll(async () => {
  if (install) await rm(dirname(install.dir), { recursive: true, force: true });
});

const installedDir = (workspacePackage: WorkspacePackage): string =>
  join(install.dir, "node_modules", workspacePackage.name);

const exists = async (path: string): Promise<boolean> =>
  (await stat(path).catch(() => null)) !== null;

describe("workspace discovery", () => {
  it("finds the publishable packages, the contract among them", () => {
    expect(packages.map((workspacePackage) => workspacePackage.name)).toContain(
      "@open-managed-agents/runtime-resource-contract",
    );
  });

  it("lists every publishable package as a devDependency, so turbo builds it before this test runs", async () => {
    const manifest = await readPackageJson(join(import.meta.dirname, ".."));
    const missing = packages
      .map((workspacePackage) => workspacePackage.name)
      .filter((name) => manifest.devDependencies?.[name] !== "workspace:*");
    expect(missing, "add these to test/package.json devDependencies as workspace:*").toEqual([]);
  });
});

describe.each(
  packages.map((workspacePackage) => [workspacePackage.name, workspacePackage] as const),
)("%s", (_name, workspacePackage) => {
  it("has an exports map and every Node target is built", async () => {
    expect(workspacePackage.exports.length).toBeGreaterThan(0);
    for (const entry of workspacePackage.exports) {
      expect(entry.target, `${entry.subpath} has no import/node/default target`).not.toBeNull();
      if (entry.target && !entry.subpath.includes("*")) {
        expect(
          await exists(join(workspacePackage.dir, entry.target)),
          `${entry.target} is missing: build the package first`,
        ).toBe(true);
      }
    }
  });

  it("installs from its tarball with internal versions resolved and only published files", async () => {
    const dir = installedDir(workspacePackage);
    const manifest = await readPackageJson(dir);
    expect(manifest.version).toBe(workspacePackage.version);
    const raw = await readFile(join(dir, "package.json"), "utf8");
    expect(raw).not.toContain("workspace:");
    const entries = await tarballEntries(install.tarballs.get(workspacePackage.name) ?? "");
    expect(entries).toContain("package/README.md");
    expect(entries).toContain("package/LICENSE");
    const unpublished = entries.filter(
      (entry) =>
        /^package\/(src|test|node_modules)\//.test(entry) || /\.test(-d)?\.[cm]?[jt]s$/.test(entry),
    );
    expect(unpublished, "sources, tests and node_modules must not be packed").toEqual([]);
  });

  for (const entry of workspacePackage.exports) {
    it(`imports ${entry.subpath} in a fresh Node process`, async () => {
      for (const specifier of await specifiersOf(workspacePackage, entry)) {
        const outcome = await importEntry(install.dir, specifier);
        if (outcome.type === "failed") expect.fail(`import ${specifier} failed:\n${outcome.error}`);
        if (!specifier.endsWith(".json"))
          expect(outcome.exportNames.length, `${specifier} exports nothing`).toBeGreaterThan(0);
      }
      if (entry.types)
        expect(
          await exists(join(installedDir(workspacePackage), entry.types)),
          `${entry.types} is not in the tarball`,
        ).toBe(true);
    });
  }
});

/**
 * Older releases inside the declared peer ranges. A consumer that already has them installs the packages
 * without a peer conflict (pnpm's strict peers fail where npm fails with ERESOLVE).
 */
const OLDER_PEERS = { vitest: "4.1.11", "@cloudflare/sandbox": "0.12.9" } as const;
/** The lowest zod the packages' `zod` range allows, forced on the whole tree: every entry must still load. */
const LOWEST_ZOD = "4.0.0";

describe("a consumer with older peers and without @aws-sdk/client-s3", () => {
  let project: string;

  beforeAll(async () => {
    project = join(dirname(install.dir), "older-peers");
    await installTarballs(project, install.tarballs, OLDER_PEERS, {
      strictPeers: true,
      overrides: { zod: LOWEST_ZOD },
    });
  });

  it("installs with strict peer dependencies and gets exactly those peer versions", async () => {
    for (const [name, version] of Object.entries(OLDER_PEERS)) {
      expect((await readPackageJson(join(project, "node_modules", name))).version).toBe(version);
    }
    expect(
      await exists(join(project, "node_modules", "@aws-sdk", "client-s3")),
      "@aws-sdk/client-s3 is optional",
    ).toBe(false);
  });

  it(`loads every entry with zod ${LOWEST_ZOD}, the floor of the declared range`, async () => {
    const zods = (await readdir(join(project, "node_modules", ".pnpm"))).filter((name) =>
      name.startsWith("zod@"),
    );
    expect(zods, `zod ${LOWEST_ZOD} is the only zod installed`).toEqual([`zod@${LOWEST_ZOD}`]);
    const failures: string[] = [];
    for (const workspacePackage of packages) {
      for (const entry of workspacePackage.exports) {
        if (entry.subpath === "./package.json") continue;
        const specifier =
          entry.subpath === "."
            ? workspacePackage.name
            : `${workspacePackage.name}/${entry.subpath.slice(2)}`;
        const outcome = await importEntry(project, specifier);
        if (outcome.type === "failed")
          failures.push(`${specifier}: ${outcome.error.split("\n").slice(0, 3).join(" ")}`);
      }
    }
    expect(failures).toEqual([]);
  }, 120_000);

  it.each([
    "@open-managed-agents/blob-store",
    "@open-managed-agents/blob-store/fs",
    "@open-managed-agents/blob-store/r2",
    "@open-managed-agents/blob-store/url",
    "@open-managed-agents/managed-runtime-cloudflare/sdk",
    "@open-managed-agents/managed-runtime-cloudflare-bridge",
  ])("imports %s", async (specifier) => {
    const outcome = await importEntry(project, specifier);
    if (outcome.type === "failed") expect.fail(`import ${specifier} failed:\n${outcome.error}`);
  });

  it("imports the /s3 entry without the optional peer, and an S3 store's first call names it", async () => {
    const outcome = await importEntry(project, "@open-managed-agents/blob-store/s3");
    if (outcome.type === "failed") expect.fail(`import failed:\n${outcome.error}`);
    const script = `import { createS3BlobStore } from "@open-managed-agents/blob-store/s3";
const store = createS3BlobStore({ bucket: "bucket", endpoint: "http://127.0.0.1:1", accessKeyId: "AKIAEXAMPLE", secretAccessKey: "secret-example-value" });
const error = await store.head("key").then(() => null, (caught) => caught);
process.stdout.write(JSON.stringify({ code: error?.code, message: error?.message }));`;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--input-type=module", "--eval", script],
      { cwd: project, env: isolatedEnv(), timeout: 20_000 },
    );
    expect(JSON.parse(stdout)).toEqual({
      code: "invalid_config",
      message: "the S3 blob store needs the @aws-sdk/client-s3 package",
    });
  });
});

describe("sideEffects: false", () => {
  it("keeps the contract's error classes when a bundler tree-shakes it", async () => {
    const { build } = await import("esbuild");
    const entry = join(install.dir, "side-effects-entry.mjs");
    const script = `import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
console.log(ManagedRuntimeError.fromJSON({ code: "not_found", message: "gone" }).name);`;
    await writeFile(entry, script);
    const outfile = join(install.dir, "side-effects-bundle.mjs");
    await build({
      entryPoints: [entry],
      outfile,
      bundle: true,
      format: "esm",
      platform: "node",
      treeShaking: true,
      minify: true,
      logLevel: "silent",
    });
    const { stdout } = await promisify(execFile)(process.execPath, [outfile]);
    expect(stdout.trim()).toBe("NotFoundError");
  });
});

/** The import specifiers of one export entry; a `*` subpath expands to every matching installed file. */
async function specifiersOf(
  workspacePackage: WorkspacePackage,
  entry: ExportEntry,
): Promise<string[]> {
  const base =
    entry.subpath === "."
      ? workspacePackage.name
      : `${workspacePackage.name}/${entry.subpath.slice(2)}`;
  if (!entry.subpath.includes("*")) return [base];
  const target = entry.target ?? "";
  const [targetPrefix = "", targetSuffix = ""] = target.split("*");
  const targetDir = join(installedDir(workspacePackage), dirname(targetPrefix));
  const filePrefix = targetPrefix.slice(targetPrefix.lastIndexOf("/") + 1);
  const matches = (await readdir(targetDir)).filter(
    (file) => file.startsWith(filePrefix) && file.endsWith(targetSuffix),
  );
  expect(matches.length, `${entry.subpath} matches no installed file`).toBeGreaterThan(0);
  return matches.map((file) =>
    base.replace("*", file.slice(filePrefix.length, file.length - targetSuffix.length)),
  );
}

/** Paths inside a packed tarball, as `tar` lists them. */
async function tarballEntries(tarball: string): Promise<string[]> {
  const { stdout } = await promisify(execFile)("tar", ["-tzf", tarball], {
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout.split("\n").filter((line) => line !== "");
}
