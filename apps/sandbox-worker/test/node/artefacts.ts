import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The app's directory. */
export const APP_DIR = fileURLToPath(new URL("../..", import.meta.url));

/** A file of the app, as text. */
export function appFile(path: string): Promise<string> {
  return readFile(join(APP_DIR, path), "utf8");
}

/** Where a dependency installed for this app resolves: its `./package.json` export, else its entry. */
function resolveEntry(name: string): string {
  const require = createRequire(join(APP_DIR, "package.json"));
  try {
    return require.resolve(`${name}/package.json`);
  } catch {
    return require.resolve(name);
  }
}

/**
 * The `package.json` of a dependency as installed for this app, found by walking up from where it
 * resolves (not every package exports `./package.json`).
 */
export async function installedPackage(
  name: string,
): Promise<{ name: string; version: string; dir: string }> {
  let dir = dirname(resolveEntry(name));
  for (;;) {
    try {
      const manifest = JSON.parse(await readFile(join(dir, "package.json"), "utf8")) as {
        name?: string;
        version?: string;
      };
      if (manifest.name === name && typeof manifest.version === "string")
        return { name, version: manifest.version, dir };
    } catch {
      // No package.json at this level; keep walking up.
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no package.json found for ${name}`);
    dir = parent;
  }
}
