import { chmod, copyFile, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The bin's name, as an `ama_worker` profile's `process.command` names it. */
export const AMA_WORKER_BIN = "oma-ama-worker";

/** Absolute path of the self-contained bin file this package ships (Node plus this one file run it). */
export function amaWorkerBinPath(): string {
  return fileURLToPath(new URL("./bin/oma-ama-worker.js", import.meta.url));
}

/**
 * Copies the bin into `directory` as `oma-ama-worker` (mode 0755) and returns its path. A copy, not a
 * link: a confined runtime that binds only `directory` must not have to see this package's install.
 */
export async function installAmaWorkerBin(directory: string): Promise<string> {
  await mkdir(directory, { recursive: true });
  const target = join(directory, AMA_WORKER_BIN);
  await copyFile(amaWorkerBinPath(), target);
  await chmod(target, 0o755);
  return target;
}
