import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { WorkspacePackage } from "./workspace-packages.js";

const run = promisify(execFile);

/** A scratch project with every package installed from its packed tarball. */
export interface ScratchInstall {
  readonly dir: string;
  /** Package name → tarball path. */
  readonly tarballs: ReadonlyMap<string, string>;
  /** How the install succeeded: fully offline, or offline-first with registry fallback. */
  readonly mode: "offline" | "prefer-offline";
}

/**
 * Environment for child pnpm runs: the parent may itself run under pnpm, whose `npm_config_*` and
 * workspace variables would make the scratch install join this repository's workspace.
 */
export function isolatedEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(npm_|pnpm_|PNPM_)/i.test(key) || key === "INIT_CWD") continue;
    env[key] = value;
  }
  return {
    ...env,
    CI: "true",
    TURBO_TELEMETRY_DISABLED: "1",
    DO_NOT_TRACK: "1",
    NODE_ENV: "production",
  };
}

/** Packs each package with `pnpm pack` (which rewrites `workspace:*` to real versions). */
export async function packAll(
  packages: readonly WorkspacePackage[],
  tarballRoot: string,
): Promise<Map<string, string>> {
  const tarballs = new Map<string, string>();
  await Promise.all(
    packages.map(async (workspacePackage, index) => {
      const destination = join(tarballRoot, String(index));
      await mkdir(destination, { recursive: true });
      await run("pnpm", ["pack", "--pack-destination", destination], {
        cwd: workspacePackage.dir,
        env: isolatedEnv(),
      });
      const files = (await readdir(destination)).filter((file) => file.endsWith(".tgz"));
      if (files.length !== 1)
        throw new Error(`pnpm pack of ${workspacePackage.name} produced ${files.length} tarballs`);
      tarballs.set(workspacePackage.name, join(destination, files[0] as string));
    }),
  );
  return tarballs;
}

/** Packs every package and installs all tarballs, with their peers, into a fresh project under the OS temp directory. */
export async function packAndInstall(
  packages: readonly WorkspacePackage[],
): Promise<ScratchInstall> {
  const dir = await mkdtemp(join(tmpdir(), "openma-packaging-"));
  try {
    return await packAndInstallInto(dir, packages);
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

async function packAndInstallInto(
  dir: string,
  packages: readonly WorkspacePackage[],
): Promise<ScratchInstall> {
  const tarballs = await packAll(packages, join(dir, "tarballs"));
  // A consumer installs peer dependencies itself; so does this project, at the declared ranges.
  const peers = Object.fromEntries(
    packages
      .flatMap((workspacePackage) => Object.entries(workspacePackage.peerDependencies))
      .filter(([name]) => !tarballs.has(name)),
  );
  const project = join(dir, "project");
  const mode = await installTarballs(project, tarballs, peers);
  return { dir: project, tarballs, mode };
}

/** How {@link installTarballs} installs: which tarballs, which peers a consumer adds, and whether peer conflicts fail. */
export interface TarballInstallOptions {
  /** Fail on unmet or conflicting peer ranges, as npm's ERESOLVE does. */
  readonly strictPeers?: boolean;
  /** Third-party versions forced everywhere in the tree, e.g. the lowest version a range allows. */
  readonly overrides?: Readonly<Record<string, string>>;
}

/**
 * Installs `tarballs` (package name → path) and `extra` dependencies into a new project at `project`.
 * Internal dependencies are overridden to the local tarballs so no `@open-managed-agents/*` package is
 * fetched from a registry; third-party dependencies come from the shared pnpm store, offline first,
 * falling back to `--prefer-offline` when the local metadata cache misses something.
 */
export async function installTarballs(
  project: string,
  tarballs: ReadonlyMap<string, string>,
  extra: Readonly<Record<string, string>>,
  options: TarballInstallOptions = {},
): Promise<ScratchInstall["mode"]> {
  await mkdir(project, { recursive: true });
  const dependencies = {
    ...extra,
    ...Object.fromEntries([...tarballs].map(([name, path]) => [name, `file:${path}`])),
  };
  await writeFile(
    join(project, "package.json"),
    JSON.stringify(
      { name: "openma-packaging-check", private: true, type: "module", dependencies },
      null,
      2,
    ),
  );
  return installProject(project, tarballs, options);
}

/**
 * Installs the project whose `package.json` is already at `project`, with every `@open-managed-agents/*`
 * package, wherever it appears in the tree, overridden to its tarball in `tarballs`.
 */
export async function installProject(
  project: string,
  tarballs: ReadonlyMap<string, string>,
  options: TarballInstallOptions = {},
): Promise<ScratchInstall["mode"]> {
  const overrides = [
    ...[...tarballs].map(([name, path]) => [name, `file:${path}`] as const),
    ...Object.entries(options.overrides ?? {}),
  ]
    .map(([name, spec]) => `  ${JSON.stringify(name)}: ${JSON.stringify(spec)}`)
    .join("\n");
  // Importing needs no dependency build scripts (native addons, binary downloads): skip them all.
  const strict = options.strictPeers
    ? "strictPeerDependencies: true\nautoInstallPeers: false\n"
    : "";
  await writeFile(
    join(project, "pnpm-workspace.yaml"),
    `strictDepBuilds: false\n${strict}overrides:\n${overrides}\n`,
  );
  const install = (flag: string) =>
    run(
      "pnpm",
      [
        "install",
        flag,
        "--ignore-scripts",
        "--config.confirmModulesPurge=false",
        "--reporter=append-only",
      ],
      {
        cwd: project,
        env: isolatedEnv(),
        maxBuffer: 32 * 1024 * 1024,
      },
    );
  try {
    await install("--offline");
    return "offline";
  } catch (offlineError) {
    try {
      await install("--prefer-offline");
    } catch (error) {
      throw new Error(
        `scratch install failed offline and with --prefer-offline:\n${describe(offlineError)}\n${describe(error)}`,
      );
    }
    return "prefer-offline";
  }
}

function describe(error: unknown): string {
  const detail = error as { stderr?: string; stdout?: string; message?: string };
  return [detail.message, detail.stderr, detail.stdout].filter(Boolean).join("\n").slice(0, 4_000);
}
