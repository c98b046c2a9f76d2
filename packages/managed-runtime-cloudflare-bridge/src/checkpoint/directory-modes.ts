import { shellQuote } from "@open-managed-agents/runtime-resource-contract";
import type { BridgeFiles } from "../runtime/files.js";

/** A restored directory whose own mode is applied only after everything inside it is extracted. */
export interface DeferredDirectoryMode {
  readonly path: string;
  readonly mode: number;
}

const OWNER_RWX = 0o700;

/**
 * The mode a directory is extracted with. tar run as uid 0 keeps a directory's owner bits while it extracts
 * into it and relies on root overriding them; a sandbox whose root holds no capability (the local confined
 * runtime) then cannot fill a 0555 directory (a Go module cache, a `chmod -R a-w` tree). Directories are
 * therefore extracted owner-writable and get their own mode afterwards, as tar does for a non-root user.
 */
export function extractedDirectoryMode(mode: number): number {
  return mode | OWNER_RWX;
}

/** Whether a directory of `mode` must get its mode back after extraction. */
export function isDeferredDirectoryMode(mode: number): boolean {
  return (mode & OWNER_RWX) !== OWNER_RWX;
}

/**
 * Applies the deferred modes inside the sandbox, deepest directories first (a parent without search
 * permission would block its children), in scripts that each stay well under the request limit.
 */
export async function applyDeferredDirectoryModes(files: BridgeFiles, deferred: readonly DeferredDirectoryMode[], maxRequestBytes: number, signal?: AbortSignal): Promise<void> {
  const depth = (path: string) => path.split("/").length;
  const ordered = [...deferred].sort((a, b) => depth(b.path) - depth(a.path));
  const budget = Math.max(1024, Math.floor(maxRequestBytes / 4));
  let script: string[] = [];
  let length = 0;
  const flush = async () => {
    if (script.length > 0) await files.run(["cd /workspace", ...script].join(" && "), signal);
    script = [];
    length = 0;
  };
  for (const { path, mode } of ordered) {
    const command = `chmod ${(mode & 0o7777).toString(8)} -- ${shellQuote(`./${path}`)}`;
    if (length + command.length > budget) await flush();
    script.push(command);
    length += command.length + 4;
  }
  await flush();
}
