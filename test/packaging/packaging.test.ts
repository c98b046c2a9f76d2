import { execFile } from "node:child_process";
import { readdir, readFile, rm, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { importEntry } from "./import-entry.js";
import { type ScratchInstall, packAndInstall } from "./scratch-install.js";
import { type ExportEntry, type WorkspacePackage, discoverPublishablePackages, readPackageJson } from "./workspace-packages.js";

const packages = await discoverPublishablePackages();
let install: ScratchInstall;

beforeAll(async () => {
  install = await packAndInstall(packages);
});

afterAll(async () => {
  if (install) await rm(dirname(install.dir), { recursive: true, force: true });
});

const installedDir = (workspacePackage: WorkspacePackage): string => join(install.dir, "node_modules", workspacePackage.name);

const exists = async (path: string): Promise<boolean> => (await stat(path).catch(() => null)) !== null;

describe("workspace discovery", () => {
  it("finds the publishable packages, the contract among them", () => {
    expect(packages.map((workspacePackage) => workspacePackage.name)).toContain("@open-managed-agents/runtime-resource-contract");
  });

  it("lists every publishable package as a devDependency, so turbo builds it before this test runs", async () => {
    const manifest = await readPackageJson(join(import.meta.dirname, ".."));
    const missing = packages.map((workspacePackage) => workspacePackage.name).filter((name) => manifest.devDependencies?.[name] !== "workspace:*");
    expect(missing, "add these to test/package.json devDependencies as workspace:*").toEqual([]);
  });
});

describe.each(packages.map((workspacePackage) => [workspacePackage.name, workspacePackage] as const))("%s", (_name, workspacePackage) => {
  it("has an exports map and every Node target is built", async () => {
    expect(workspacePackage.exports.length).toBeGreaterThan(0);
    for (const entry of workspacePackage.exports) {
      expect(entry.target, `${entry.subpath} has no import/node/default target`).not.toBeNull();
      if (entry.target && !entry.subpath.includes("*")) {
        expect(await exists(join(workspacePackage.dir, entry.target)), `${entry.target} is missing: build the package first`).toBe(true);
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
    const unpublished = entries.filter((entry) => /^package\/(src|test|node_modules)\//.test(entry) || /\.test(-d)?\.[cm]?[jt]s$/.test(entry));
    expect(unpublished, "sources, tests and node_modules must not be packed").toEqual([]);
  });

  for (const entry of workspacePackage.exports) {
    it(`imports ${entry.subpath} in a fresh Node process`, async () => {
      for (const specifier of await specifiersOf(workspacePackage, entry)) {
        const outcome = await importEntry(install.dir, specifier);
        if (outcome.type === "failed") expect.fail(`import ${specifier} failed:\n${outcome.error}`);
        if (!specifier.endsWith(".json")) expect(outcome.exportNames.length, `${specifier} exports nothing`).toBeGreaterThan(0);
      }
      if (entry.types) expect(await exists(join(installedDir(workspacePackage), entry.types)), `${entry.types} is not in the tarball`).toBe(true);
    });
  }
});

/** The import specifiers of one export entry; a `*` subpath expands to every matching installed file. */
async function specifiersOf(workspacePackage: WorkspacePackage, entry: ExportEntry): Promise<string[]> {
  const base = entry.subpath === "." ? workspacePackage.name : `${workspacePackage.name}/${entry.subpath.slice(2)}`;
  if (!entry.subpath.includes("*")) return [base];
  const target = entry.target ?? "";
  const [targetPrefix = "", targetSuffix = ""] = target.split("*");
  const targetDir = join(installedDir(workspacePackage), dirname(targetPrefix));
  const filePrefix = targetPrefix.slice(targetPrefix.lastIndexOf("/") + 1);
  const matches = (await readdir(targetDir)).filter((file) => file.startsWith(filePrefix) && file.endsWith(targetSuffix));
  expect(matches.length, `${entry.subpath} matches no installed file`).toBeGreaterThan(0);
  return matches.map((file) => base.replace("*", file.slice(filePrefix.length, file.length - targetSuffix.length)));
}

/** Paths inside a packed tarball, as `tar` lists them. */
async function tarballEntries(tarball: string): Promise<string[]> {
  const { stdout } = await promisify(execFile)("tar", ["-tzf", tarball], { maxBuffer: 16 * 1024 * 1024 });
  return stdout.split("\n").filter((line) => line !== "");
}
