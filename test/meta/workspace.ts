import { readdir, readFile, stat } from "node:fs/promises";
import { join, relative, resolve } from "node:path";

/** Repository root (this file lives in `test/meta`). */
export const REPO_ROOT = resolve(import.meta.dirname, "..", "..");

/** Name of every workspace package; the scope the layering rules speak about. */
export const SCOPE = "@open-managed-agents/";

/** The fields of a package.json these checks read; each is checked where it is used. */
export interface Manifest {
  readonly name?: unknown;
  readonly version?: unknown;
  readonly private?: unknown;
  readonly repository?: unknown;
  readonly homepage?: unknown;
  readonly bugs?: unknown;
  readonly engines?: unknown;
  readonly sideEffects?: unknown;
  readonly license?: unknown;
  readonly type?: unknown;
  readonly exports?: unknown;
  readonly files?: unknown;
  readonly scripts?: unknown;
  readonly publishConfig?: unknown;
  readonly dependencies?: Readonly<Record<string, string>>;
  readonly peerDependencies?: Readonly<Record<string, string>>;
  readonly optionalDependencies?: Readonly<Record<string, string>>;
  readonly devDependencies?: Readonly<Record<string, string>>;
}

/** A workspace package under `packages/*` or an app under `apps/*`. */
export interface WorkspaceMember {
  readonly name: string;
  /** `packages/<dir>` or `apps/<dir>`, relative to the repository root. */
  readonly path: string;
  readonly dir: string;
  readonly kind: "package" | "app";
  readonly isPrivate: boolean;
  readonly manifest: Manifest;
}

const isFile = async (path: string): Promise<boolean> =>
  (await stat(path).catch(() => null))?.isFile() ?? false;

/** Every workspace member under `packages/*` and `apps/*`, found at run time so new ones are checked too. */
export async function discoverMembers(): Promise<WorkspaceMember[]> {
  const members: WorkspaceMember[] = [];
  for (const [folder, kind] of [
    ["packages", "package"],
    ["apps", "app"],
  ] as const) {
    for (const entry of (await readdir(join(REPO_ROOT, folder))).sort()) {
      const dir = join(REPO_ROOT, folder, entry);
      if (!(await isFile(join(dir, "package.json")))) continue;
      const parsed: unknown = JSON.parse(await readFile(join(dir, "package.json"), "utf8"));
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
        throw new Error(`${folder}/${entry}/package.json is not an object`);
      const manifest = parsed as Manifest;
      if (typeof manifest.name !== "string")
        throw new Error(`${folder}/${entry}/package.json has no name`);
      members.push({
        name: manifest.name,
        path: `${folder}/${entry}`,
        dir,
        kind,
        isPrivate: manifest.private === true,
        manifest,
      });
    }
  }
  return members;
}

/** Files under `dir` (recursively, skipping `node_modules` and `dist`) whose names pass `accept`. */
export async function listFiles(dir: string, accept: (name: string) => boolean): Promise<string[]> {
  const found: string[] = [];
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    if (entry.name === "node_modules" || entry.name === "dist" || entry.name.startsWith("."))
      continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...(await listFiles(path, accept)));
    else if (entry.isFile() && accept(entry.name)) found.push(path);
  }
  return found.sort();
}

/** A path relative to the repository root, for failure messages. */
export const repoPath = (path: string): string => relative(REPO_ROOT, path);

/** The workspace package a specifier names (`@scope/name/sub` → `@scope/name`), or null for any other specifier. */
export function workspacePackageOf(specifier: string): string | null {
  if (!specifier.startsWith(SCOPE)) return null;
  const [, name] = specifier.split("/");
  return name ? `${SCOPE}${name}` : null;
}
