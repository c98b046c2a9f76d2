import { hasMethods } from "@open-managed-agents/runtime-utils";
import type {
  ProcessHandle,
  SandboxDuplexProcessPort,
  SandboxManagedWorkspaceLifecyclePort,
  SandboxPort,
  SandboxRuntimePort,
  SandboxSessionOutputMountPort,
  SandboxWorkspaceBackupPort,
  SandboxProcessOptions,
} from "./ports.js";

/** A sandbox whose optional byte file I/O members are present. */
export type SandboxWithBytesFileIO = SandboxPort & {
  readFileBytes(path: string): Promise<Uint8Array>;
  writeFileBytes(path: string, content: Uint8Array): Promise<void>;
};

/** A sandbox whose optional `startProcess` member is present. */
export type SandboxWithBackgroundProcess = SandboxPort & {
  startProcess(command: string, options?: SandboxProcessOptions): Promise<ProcessHandle>;
};

/** A sandbox whose optional `destroy` member is present. */
export type SandboxWithDestroy = SandboxPort & { destroy(): Promise<void> };

const RUNTIME_METHODS = [
  "runtimeHandle",
  "runtimeCapabilities",
  "status",
  "renewLease",
  "suspend",
  "resume",
  "checkpoint",
  "destroy",
] as const;

/** True when the sandbox also implements {@link SandboxRuntimePort} (lifecycle, lease, checkpoints). */
export function supportsSandboxRuntime<S extends SandboxPort>(
  sandbox: S,
): sandbox is S & SandboxRuntimePort {
  return hasMethods(sandbox, RUNTIME_METHODS);
}

/** True when the sandbox can spawn processes with live stdin, stdout and stderr. */
export function supportsDuplexProcess<S extends SandboxPort>(
  sandbox: S,
): sandbox is S & SandboxDuplexProcessPort {
  return hasMethods(sandbox, ["spawnDuplexProcess"]);
}

/** True when the sandbox offers provider-native workspace backups. */
export function supportsWorkspaceBackup<S extends SandboxPort>(
  sandbox: S,
): sandbox is S & SandboxWorkspaceBackupPort {
  return hasMethods(sandbox, ["createWorkspaceBackup", "restoreWorkspaceBackup"]);
}

/** True when the sandbox can durably mount session outputs at `/mnt/session/outputs`. */
export function supportsSessionOutputMount<S extends SandboxPort>(
  sandbox: S,
): sandbox is S & SandboxSessionOutputMountPort {
  return hasMethods(sandbox, ["sessionOutputMountCapabilities", "mountSessionOutputs"]);
}

/** True when the provider owns a durable `/workspace` mount. */
export function supportsManagedWorkspaceLifecycle<S extends SandboxPort>(
  sandbox: S,
): sandbox is S & SandboxManagedWorkspaceLifecyclePort {
  return hasMethods(sandbox, ["mountWorkspace", "unmountWorkspace"]);
}

/** True when `readFileBytes` and `writeFileBytes` are both present. */
export function supportsBytesFileIO<S extends SandboxPort>(
  sandbox: S,
): sandbox is S & SandboxWithBytesFileIO {
  return hasMethods(sandbox, ["readFileBytes", "writeFileBytes"]);
}

/** True when `startProcess` is present. */
export function supportsBackgroundProcess<S extends SandboxPort>(
  sandbox: S,
): sandbox is S & SandboxWithBackgroundProcess {
  return hasMethods(sandbox, ["startProcess"]);
}

/** True when `destroy` is present. */
export function supportsDestroy<S extends SandboxPort>(
  sandbox: S,
): sandbox is S & SandboxWithDestroy {
  return hasMethods(sandbox, ["destroy"]);
}
