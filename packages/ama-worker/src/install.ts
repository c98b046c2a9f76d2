import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { chmod, copyFile, mkdir, rename, rm, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { pipeline } from "node:stream/promises";
import { fileURLToPath } from "node:url";

/** The bin's name, as an `ama_worker` profile's `process.command` names it. */
export const AMA_WORKER_BIN = "oma-ama-worker";

/**
 * Where the local stack installs the bin by default: one directory per build, named by the bin's sha256,
 * under `/opt`, which a bubblewrap-confined local runtime sees (copy-on-write over the host's system
 * directories), unlike the host's `/tmp` or this package's install. Two builds never share a directory, so
 * another process installing another build never replaces the file a sandbox of this one runs.
 */
export const AMA_WORKER_INSTALL_ROOT = "/opt/open-managed-agents/ama-worker";

/** Absolute path of the self-contained bin file this package ships (Node plus this one file run it). */
export function amaWorkerBinPath(): string {
  return fileURLToPath(new URL("./bin/oma-ama-worker.js", import.meta.url));
}

/** Hex sha256 of a file's bytes, or null when it cannot be read. */
async function fileSha256(path: string): Promise<string | null> {
  const hash = createHash("sha256");
  try {
    await pipeline(createReadStream(path), hash);
  } catch {
    return null;
  }
  return hash.digest("hex");
}

/** Whether `target` is an executable file with the shipped bin's bytes. */
async function isInstalled(target: string, digest: string): Promise<boolean> {
  const found = await stat(target).catch(() => null);
  if (found === null || !found.isFile() || (found.mode & 0o555) !== 0o555) return false;
  return (await fileSha256(target)) === digest;
}

let shippedDigest: Promise<string> | undefined;

/** Hex sha256 of the bin this package ships. */
export function amaWorkerBinSha256(): Promise<string> {
  shippedDigest ??= fileSha256(amaWorkerBinPath()).then((digest) => {
    if (digest === null)
      throw new Error(
        `the ${AMA_WORKER_BIN} bin of this package is missing at ${amaWorkerBinPath()}; build the package`,
      );
    return digest;
  });
  return shippedDigest;
}

/** The directory {@link installAmaWorkerBin} uses when none is named: {@link AMA_WORKER_INSTALL_ROOT}/<sha256>. */
export async function defaultAmaWorkerBinDirectory(): Promise<string> {
  return join(AMA_WORKER_INSTALL_ROOT, await amaWorkerBinSha256());
}

/**
 * Puts the bin into `directory` (by default this build's own directory, see {@link AMA_WORKER_INSTALL_ROOT})
 * as `oma-ama-worker` (mode 0755) and returns its path; the PATH entry is the directory of that path. A
 * file already there with this build's sha256 is kept as it is, so processes installing the same build share
 * it without rewriting it under each other's running sandboxes. Otherwise a copy, not a link (a confined
 * runtime that sees only `directory` must not have to see this package's install), renamed into place, so a
 * sandbox running the previous file never reads a half-written one.
 */
export async function installAmaWorkerBin(directory?: string): Promise<string> {
  const digest = await amaWorkerBinSha256();
  const target = join(directory ?? join(AMA_WORKER_INSTALL_ROOT, digest), AMA_WORKER_BIN);
  await mkdir(dirname(target), { recursive: true, mode: 0o755 });
  if (await isInstalled(target, digest)) return target;
  const partial = `${target}.${process.pid}.${Date.now()}.partial`;
  try {
    await copyFile(amaWorkerBinPath(), partial);
    await chmod(partial, 0o755);
    await rename(partial, target);
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  }
  return target;
}
