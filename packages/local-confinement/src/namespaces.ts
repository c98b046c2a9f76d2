import { InvalidRequestError } from "@open-managed-agents/runtime-resource-contract";
import { type NamespaceHandle, openNamespace } from "./holder.js";
import { findExecutable } from "./mounts.js";
import type { DirectoryIdentity } from "./paths.js";
import { spawnEntered, spawnUnshared } from "./spawn.js";
import type { MappedCommand, MappedProcess, PathMounts } from "./types.js";

type Identities = Readonly<Record<string, DirectoryIdentity>>;

/** A mount namespace kept for one mount table, rebuilt when a host directory was replaced. */
export interface KeptNamespace {
  /** Settles once the current setup finished, whether it worked or not. */
  settled(): Promise<void>;
  /**
   * Enters the kept namespace when it is ready and shows the directories of `identities`;
   * otherwise starts a (re)build and runs this command in a namespace of its own, so no command
   * ever waits for the setup.
   */
  spawn(command: MappedCommand, identities: Identities): MappedProcess;
  close(): void;
}

/** A failed setup is tried again for the same directories after this long (the host may have been busy). */
const RETRY_AFTER_MS = 30_000;

/** Creates the keeper and starts building the namespace for `identities` right away. */
export function createKeptNamespace(mounts: PathMounts, identities: Identities): KeptNamespace {
  let kept: { readonly handle: NamespaceHandle; readonly key: string } | undefined;
  let opening: Promise<void> | undefined;
  let failed: { readonly key: string; readonly at: number } | undefined;
  let closed = false;
  const canKeep = findExecutable("nsenter") !== null;

  const build = (wantedKey: string): void => {
    if (!canKeep || opening !== undefined) return;
    if (failed !== undefined && failed.key === wantedKey && Date.now() - failed.at < RETRY_AFTER_MS)
      return;
    opening = openNamespace(mounts)
      .then(
        (handle) => {
          const key = identityKey(handle.identities);
          if (closed || key !== wantedKey) {
            // Disposed meanwhile, or a directory was replaced during the setup: a later command
            // with the new directories builds again.
            handle.close();
            failed = { key: wantedKey, at: Date.now() };
          } else kept = { handle, key };
        },
        () => {
          failed = { key: wantedKey, at: Date.now() };
        },
      )
      .finally(() => {
        opening = undefined;
      });
  };

  build(identityKey(identities));
  return {
    settled: async () => {
      await opening;
    },
    spawn(command, wanted) {
      if (closed)
        throw new InvalidRequestError({
          message: "the mount namespace was disposed",
          context: { mountPoints: Object.keys(mounts) },
        });
      const wantedKey = identityKey(wanted);
      if (kept !== undefined && kept.key === wantedKey)
        return spawnEntered(kept.handle.fd, command);
      // Not built yet, or a host directory was replaced since the setup and the namespace shows the old one.
      kept?.handle.close();
      kept = undefined;
      build(wantedKey);
      return spawnUnshared(mounts, command);
    },
    close() {
      closed = true;
      kept?.handle.close();
      kept = undefined;
    },
  };
}

function identityKey(identities: Identities): string {
  return Object.keys(identities)
    .sort()
    .map((mountPoint) => `${mountPoint}=${identities[mountPoint]}`)
    .join("\n");
}
