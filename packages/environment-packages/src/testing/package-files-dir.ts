import { mkdirSync, mkdtempSync } from "node:fs";
import { join } from "node:path";

/**
 * Where test package files live: under the host's `/opt`, which a bubblewrap-confined local runtime sees
 * (copy-on-write), unlike the host's `/tmp`. Writing there needs root, as the confined runtime does.
 */
export const PACKAGE_FILES_ROOT = "/opt/open-managed-agents/test-packages";

/** Creates a fresh directory for one test file's package files; the caller removes it. */
export function createPackageFilesDir(prefix: string): string {
  mkdirSync(PACKAGE_FILES_ROOT, { recursive: true });
  return mkdtempSync(join(PACKAGE_FILES_ROOT, `${prefix}-`));
}
