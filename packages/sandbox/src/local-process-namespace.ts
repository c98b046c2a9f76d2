import { InvalidRequestError } from "@open-managed-agents/runtime-resource-contract";
import { type NamespaceHandle, openNamespace } from "./local-process-holder.js";
import { findExecutable } from "./local-process-mount-script.js";
import type { DirectoryIdentity } from "./local-process-paths.js";
import { spawnEntered, spawnUnshared } from "./local-process-spawn.js";
import type { MappedCommand, MappedProcess, PathMounts } from "./local-process-types.js";

type Identities = Readonly<Record<string, DirectoryIdentity>>;

/** A mount namespace kept for one mount table, rebuilt when a host directory was replaced. */
export interface KeptNamespace {
  /** Settles once the current setup finished, whether it worked or not. */
  settled(): Promise<void>;
  /** True while a namespace is open whose directories match `identities`. */
  isCurrent(identities: Identities): boolean;
  /**
   * Enters the kept namespace when it is ready and current; otherwise starts a (re)build and runs
   * this command in a namespace of its own, so no command ever waits for the setup.
   */
  spawn(command: MappedCommand, identities: Identities): MappedProcess;
  close(): void;
}

/** Creates the keeper and starts building the namespace for `identities` right away. */
export function createKeptNamespace(mounts: PathMounts, identities: Identities): KeptNamespace {
  let handle: NamespaceHandle | undefined;
  let opening: Promise<void> | undefined;
  let failedFor: string | undefined;
  let closed = false;
  const canKeep = findExecutable("nsenter") !== null;

  const build = (wanted: Identities): void => {
    if (!canKeep || opening !== undefined || failedFor === identityKey(wanted)) return;
    opening = openNamespace(mounts)
      .then(
        (opened) => {
          if (closed || identityKey(opened.identities) !== identityKey(wanted)) {
            // Disposed meanwhile, or a directory was replaced during the setup: the next command
            // with the new directories builds again.
            opened.close();
            if (!closed) failedFor = identityKey(wanted);
          } else handle = opened;
        },
        () => {
          // The same directories fail the same way; the next replacement of one gets a new try.
          failedFor = identityKey(wanted);
        },
      )
      .finally(() => {
        opening = undefined;
      });
  };
  const isCurrent = (wanted: Identities): boolean => handle !== undefined && identityKey(handle.identities) === identityKey(wanted);

  build(identities);
  return {
    settled: async () => {
      await opening;
    },
    isCurrent,
    spawn(command, wanted) {
      if (closed) throw new InvalidRequestError({ message: "the mount namespace was disposed", context: { mountPoints: Object.keys(mounts) } });
      if (handle !== undefined && isCurrent(wanted)) return spawnEntered(handle.fd, command);
      // A host directory was replaced since the setup: the kept namespace shows the old one.
      handle?.close();
      handle = undefined;
      build(wanted);
      return spawnUnshared(mounts, command);
    },
    close() {
      closed = true;
      handle?.close();
      handle = undefined;
    },
  };
}

function identityKey(identities: Identities): string {
  return Object.keys(identities)
    .sort()
    .map((mountPoint) => `${mountPoint}=${identities[mountPoint]}`)
    .join("\n");
}
