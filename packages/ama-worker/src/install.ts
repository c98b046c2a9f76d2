import { chmod, copyFile, mkdir, rename } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The bin's name, as an `ama_worker` profile's `process.command` names it. */
export const AMA_WORKER_BIN = "oma-ama-worker";

/**
 * Where the local stack installs the bin: under `/opt`, which a bubblewrap-confined local runtime sees
 * (copy-on-write over the host's system directories), unlike the host's `/tmp` or this package's install.
 */
export const DEFAULT_AMA_WORKER_BIN_DIRECTORY = "/opt/open-managed-agents/bin";

/** Absolute path of the self-contained bin file this package ships (Node plus this one file run it). */
export function amaWorkerBinPath(): string {
  return fileURLToPath(new URL("./bin/oma-ama-worker.js", import.meta.url));
}

/**
 * Copies the bin into `directory` as `oma-ama-worker` (mode 0755) and returns its path. A copy, not a
 * link: a confined runtime that sees only `directory` must not have to see this package's install. The
 * copy is renamed into place, so a sandbox running the previous copy never reads a half-written file.
 */
export async function installAmaWorkerBin(directory: string = DEFAULT_AMA_WORKER_BIN_DIRECTORY): Promise<string> {
  await mkdir(directory, { recursive: true });
  const target = join(directory, AMA_WORKER_BIN);
  const partial = `${target}.${process.pid}.${Date.now()}.partial`;
  await copyFile(amaWorkerBinPath(), partial);
  await chmod(partial, 0o755);
  await rename(partial, target);
  return target;
}
