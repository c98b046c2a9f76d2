import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLocalSubprocessSandboxProvider } from "@open-managed-agents/sandbox/adapters/local-subprocess";

/**
 * Real local processes over host directories (NODE_ENV=test only). `/workspace` is private to each
 * runtime; `/tmp` and `/usr` are the host's, which is why the warm marker names its runtime and apt is
 * not exercised here.
 */
export function createLocalProvider() {
  return createLocalSubprocessSandboxProvider({ rootDir: mkdtempSync(join(tmpdir(), "oma-env-packages-")) });
}

/** A host scratch directory for test package files. */
export function scratchDir(): string {
  return mkdtempSync(join(tmpdir(), "oma-env-packages-files-"));
}
