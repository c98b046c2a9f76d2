import { readdir, readFile, stat } from "node:fs/promises";
import { join, resolve } from "node:path";

/** Repository root (this file lives in `test/packaging`). */
export const REPO_ROOT = resolve(import.meta.dirname, "..", "..");

/** One entry of a package's exports map, resolved for Node's `import` condition. */
export interface ExportEntry {
  /** Subpath as written in the map (`.`, `./local-subprocess`, `./package.json`). */
  readonly subpath: string;
  /** Target Node loads (`import`, `node` or `default` condition, or a plain string). Null when none applies. */
  readonly target: string | null;
  /** Declared `types` target, if any. */
  readonly types: string | null;
}

/** A publishable workspace package. */
export interface WorkspacePackage {
  readonly name: string;
  readonly version: string;
  readonly dir: string;
  readonly exports: readonly ExportEntry[];
  /** Peer dependencies a consumer installs next to the package. */
  readonly peerDependencies: Readonly<Record<string, string>>;
}

interface PackageJson {
  readonly name?: string;
  readonly version?: string;
  readonly private?: boolean;
  readonly exports?: unknown;
  readonly dependencies?: Readonly<Record<string, string>>;
  readonly devDependencies?: Readonly<Record<string, string>>;
  readonly peerDependencies?: Readonly<Record<string, string>>;
}

/** Reads and parses a package.json; the shape is checked field by field where it is used. */
export async function readPackageJson(dir: string): Promise<PackageJson> {
  const parsed: unknown = JSON.parse(await readFile(join(dir, "package.json"), "utf8"));
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw new Error(`${dir}/package.json is not an object`);
  return parsed as PackageJson;
}

/** Every non-private package under `packages/*`, found at run time so new packages are checked too. */
export async function discoverPublishablePackages(): Promise<WorkspacePackage[]> {
  const packagesDir = join(REPO_ROOT, "packages");
  const found: WorkspacePackage[] = [];
  for (const entry of (await readdir(packagesDir)).sort()) {
    const dir = join(packagesDir, entry);
    if (!(await stat(join(dir, "package.json")).catch(() => null))?.isFile()) continue;
    const manifest = await readPackageJson(dir);
    if (manifest.private === true) continue;
    if (typeof manifest.name !== "string" || typeof manifest.version !== "string")
      throw new Error(`${dir}/package.json needs a name and a version`);
    found.push({
      name: manifest.name,
      version: manifest.version,
      dir,
      exports: exportEntries(manifest.exports),
      peerDependencies: manifest.peerDependencies ?? {},
    });
  }
  return found;
}

/** Flattens an exports map into one entry per subpath, picking what Node's ESM loader would pick. */
export function exportEntries(exportsField: unknown): ExportEntry[] {
  if (exportsField === undefined) return [];
  if (typeof exportsField === "string")
    return [{ subpath: ".", target: exportsField, types: null }];
  if (typeof exportsField !== "object" || exportsField === null)
    throw new Error("exports must be a string or an object");
  const record = exportsField as Record<string, unknown>;
  const keys = Object.keys(record);
  // A map whose keys are all conditions describes the root entry only.
  if (keys.every((key) => !key.startsWith(".")))
    return [{ subpath: ".", target: nodeTarget(record), types: typesTarget(record) }];
  return keys.map((subpath) => ({
    subpath,
    target: nodeTarget(record[subpath]),
    types: typesTarget(record[subpath]),
  }));
}

function nodeTarget(value: unknown): string | null {
  if (typeof value === "string") return value;
  if (typeof value !== "object" || value === null) return null;
  for (const [condition, target] of Object.entries(value as Record<string, unknown>)) {
    if (!["node", "import", "default"].includes(condition)) continue;
    const resolved = nodeTarget(target);
    if (resolved !== null) return resolved;
  }
  return null;
}

function typesTarget(value: unknown): string | null {
  if (typeof value !== "object" || value === null) return null;
  const types = (value as Record<string, unknown>).types;
  return typeof types === "string" ? types : null;
}
