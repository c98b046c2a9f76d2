import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, openSync, statSync } from "node:fs";
import { SandboxFailedError } from "@open-managed-agents/runtime-resource-contract";
import { createMountSetup, findExecutable, unshareHolderArgs } from "./mounts.js";
import type { DirectoryIdentity } from "./paths.js";
import type { PathMounts } from "./types.js";

/** A mount namespace with the table's bind mounts, kept alive by an open descriptor and no process. */
export interface NamespaceHandle {
  /** Descriptor of `/proc/<pid>/ns/mnt`, close-on-exec; handed to each command as its descriptor 3. */
  readonly fd: number;
  /** `dev:ino` of each mount point as the namespace shows it, by mount point. */
  readonly identities: Readonly<Record<string, DirectoryIdentity>>;
  /** Closes the descriptor; the namespace ends once the last command inside it has exited. */
  close(): void;
}

/** Longest a mount setup may take before it is killed and reported as failed. */
const SETUP_TIMEOUT_MS = 10_000;
const MAX_ERROR_TEXT = 2_048;
const SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/**
 * Builds a mount namespace for `mounts` with a short-lived holder process: `unshare` sets the mounts
 * up and prints `ready`, the descriptor of its namespace is opened, then the holder's stdin is closed
 * and it exits. Resolves only after the holder is gone, so no process outlives the setup; were this
 * server to die mid-setup, the holder reads end-of-file and exits too.
 */
export async function openNamespace(mounts: PathMounts): Promise<NamespaceHandle> {
  const setup = createMountSetup(mounts);
  const holder = spawn(findExecutable("unshare") ?? "unshare", unshareHolderArgs(setup), {
    cwd: "/",
    env: {
      PATH:
        process.env.PATH === undefined || process.env.PATH === ""
          ? SYSTEM_PATH
          : `${process.env.PATH}:${SYSTEM_PATH}`,
    },
    stdio: "pipe",
  });
  const gone = new Promise<void>((resolve) => {
    holder.once("close", () => resolve());
    holder.once("error", () => resolve());
  });
  let errorText = "";
  holder.stderr?.on("data", (chunk: Buffer) => {
    if (errorText.length < MAX_ERROR_TEXT) errorText += chunk.toString("utf8");
  });
  holder.stdin?.on("error", () => undefined);
  let fd: number | undefined;
  try {
    await waitForReady(holder, () => errorText);
    fd = openSync(`/proc/${holder.pid}/ns/mnt`, "r");
    const identities: Record<string, DirectoryIdentity> = {};
    for (const mountPoint of Object.keys(mounts)) {
      const info = statSync(`/proc/${holder.pid}/root${mountPoint}`);
      identities[mountPoint] = `${info.dev}:${info.ino}`;
    }
    const namespaceFd = fd;
    let open = true;
    return {
      fd: namespaceFd,
      identities,
      close() {
        if (!open) return;
        open = false;
        closeSync(namespaceFd);
      },
    };
  } catch (error) {
    if (fd !== undefined) closeSync(fd);
    throw SandboxFailedError.isInstance(error)
      ? error
      : new SandboxFailedError({
          message: `could not keep the mount namespace: ${String(error)}`,
          cause: error,
        });
  } finally {
    holder.stdin?.end();
    if (holder.exitCode === null && holder.signalCode === null && fd === undefined)
      holder.kill("SIGKILL");
    await gone;
    setup.cleanup();
  }
}

function waitForReady(holder: ChildProcess, errorText: () => string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let output = "";
    const fail = (reason: string): void => {
      cleanup();
      const detail = errorText().trim().slice(0, MAX_ERROR_TEXT);
      reject(
        new SandboxFailedError({
          message: `mount namespace setup failed: ${reason}${detail === "" ? "" : `: ${detail}`}`,
          context: { reason },
        }),
      );
    };
    const onData = (chunk: Buffer): void => {
      output += chunk.toString("utf8");
      if (output.includes("ready\n")) {
        cleanup();
        resolve();
      }
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null): void =>
      fail(`the setup exited with ${code ?? signal}`);
    const onError = (error: Error): void => fail(`could not start unshare (${error.message})`);
    const timer = setTimeout(
      () => fail(`no answer within ${SETUP_TIMEOUT_MS} ms`),
      SETUP_TIMEOUT_MS,
    );
    const cleanup = (): void => {
      clearTimeout(timer);
      holder.stdout?.off("data", onData);
      holder.off("close", onExit);
      holder.off("error", onError);
    };
    holder.stdout?.on("data", onData);
    holder.once("close", onExit);
    holder.once("error", onError);
  });
}
