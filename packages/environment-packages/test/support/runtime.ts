import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLocalSubprocessSandboxProvider } from "@open-managed-agents/local-confinement/local-subprocess";
import { createPackageFilesDir } from "../../src/testing.js";

/**
 * Real local processes over host directories, confined with bubblewrap. `/workspace` is private to each
 * runtime; `/tmp` is the runtime's own and the host's `/usr` is copy-on-write.
 */
export function createLocalProvider() {
  return createLocalSubprocessSandboxProvider({
    rootDir: mkdtempSync(join(tmpdir(), "oma-env-packages-")),
  });
}

/** A directory for test package files that the confined runtimes can read. */
export function scratchDir(): string {
  return createPackageFilesDir("oma-env-packages-files");
}
