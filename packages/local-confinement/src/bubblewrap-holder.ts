import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, openSync, readlinkSync } from "node:fs";
import { SandboxFailedError } from "@open-managed-agents/runtime-resource-contract";
import { type ConfinementNetwork, NAMESPACE_FLAGS, type HolderCommand } from "./bubblewrap-args.js";
import { joiningCgroups } from "./cgroups.js";
import { findExecutable } from "./mounts.js";

const SETUP_TIMEOUT_MS = 15_000;
const MAX_ERROR_TEXT = 2_048;
const SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** A container's first process, started by `unshare` and bubblewrap, and how to end it. */
export interface BubblewrapHolder {
  readonly process: ChildProcess;
  /** Settles once the first process is gone and `release` (proxy, cgroups) ran. */
  readonly ended: Promise<void>;
  /** Closes the first process's stdin and kills it if it still runs. Idempotent. */
  dispose(): void;
}

/** The namespaces of a container, held open by this process. */
export interface HeldNamespaces {
  /** The `nsenter` flag of each namespace the container does not share with this process. */
  readonly flags: readonly string[];
  /** A descriptor on each, in the order of `flags`. */
  readonly fds: readonly number[];
  /** A descriptor on the container's root directory. */
  readonly rootFd: number;
}

/**
 * Starts the holder (every process of it in `procsFiles`' cgroups from the first instruction) and hands
 * bubblewrap its options on their descriptor. `release` runs once the holder is gone.
 */
export function startHolder(
  command: HolderCommand,
  procsFiles: readonly string[],
  release: () => Promise<void>,
): BubblewrapHolder {
  const [program, args] = joiningCgroups(
    procsFiles,
    findExecutable("unshare") as string,
    command.argv,
  );
  const holder = spawn(program, args, {
    cwd: "/",
    env: { PATH: SYSTEM_PATH },
    stdio: ["pipe", "pipe", "pipe", "pipe", "pipe"],
  });
  const optionsStream = holder.stdio[4] as NodeJS.WritableStream | null;
  optionsStream?.on("error", () => undefined);
  optionsStream?.end(command.bwrapOptions);
  const ended = new Promise<void>((resolve) => {
    holder.once("close", () => resolve());
    holder.once("error", () => resolve());
  }).then(release);
  holder.stdin?.on("error", () => undefined);
  return {
    process: holder,
    ended,
    dispose() {
      holder.stdin?.end();
      if (holder.exitCode === null && holder.signalCode === null) holder.kill("SIGKILL");
    },
  };
}

/**
 * Waits for the container to be ready and holds its namespaces; a failure ends the holder before it
 * throws. The held descriptors are closed once the holder has ended.
 */
export async function holdContainer(
  holder: BubblewrapHolder,
  network: ConfinementNetwork,
): Promise<{ pid: number; held: HeldNamespaces }> {
  let pid: number;
  let held: HeldNamespaces;
  try {
    pid = await waitForReady(holder.process);
    held = holdNamespaces(pid, network);
  } catch (error) {
    holder.dispose();
    await holder.ended;
    throw error;
  }
  void holder.ended.then(() => {
    for (const fd of [...held.fds, held.rootFd]) closeSync(fd);
  });
  return { pid, held };
}

/**
 * Opens a descriptor on every namespace the container does not share with this process, and on its root
 * directory, while its first process is known to be alive; the essential namespaces must be its own.
 */
function holdNamespaces(pid: number, network: ConfinementNetwork): HeldNamespaces {
  const flags: string[] = [];
  for (const [name, flag] of Object.entries(NAMESPACE_FLAGS)) {
    if (readlinkSync(`/proc/${pid}/ns/${name}`) !== readlinkSync(`/proc/self/ns/${name}`))
      flags.push(flag);
  }
  const required = ["--user", "--mount", "--pid", ...(network === "none" ? ["--net"] : [])];
  const shared = required.filter((flag) => !flags.includes(flag));
  if (shared.length > 0) {
    throw new SandboxFailedError({
      message: `bubblewrap did not give the container its own namespaces: ${shared.join(", ")}`,
      context: { shared },
    });
  }
  const names = Object.fromEntries(
    Object.entries(NAMESPACE_FLAGS).map(([name, flag]) => [flag, name]),
  );
  const fds: number[] = [];
  try {
    for (const flag of flags) fds.push(openSync(`/proc/${pid}/ns/${names[flag] as string}`, "r"));
    return { flags, fds, rootFd: openSync(`/proc/${pid}/root`, "r") };
  } catch (error) {
    for (const fd of fds) closeSync(fd);
    const message = `could not hold the container's namespaces: ${String(error)}`;
    throw new SandboxFailedError({ message, cause: error });
  }
}

/** Resolves with the first process's host pid once bubblewrap reported it and the process said `ready`. */
function waitForReady(holder: ChildProcess): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    let output = "";
    let info = "";
    let errorText = "";
    let pid: number | undefined;
    const settle = (): void => {
      if (pid === undefined || !output.includes("ready\n")) return;
      cleanup();
      resolve(pid);
    };
    const fail = (reason: string): void => {
      cleanup();
      const detail = errorText.trim().slice(0, MAX_ERROR_TEXT);
      const message = `confined container setup failed: ${reason}${detail === "" ? "" : `: ${detail}`}`;
      reject(new SandboxFailedError({ message, context: { reason } }));
    };
    const onOutput = (chunk: Buffer): void => {
      output += chunk.toString("utf8");
      settle();
    };
    const onInfo = (chunk: Buffer): void => {
      info += chunk.toString("utf8");
      const match = /"child-pid"\s*:\s*(\d+)/.exec(info);
      if (match !== null) pid = Number(match[1]);
      settle();
    };
    const onError = (chunk: Buffer): void => {
      if (errorText.length < MAX_ERROR_TEXT) errorText += chunk.toString("utf8");
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null): void =>
      fail(`the setup exited with ${code ?? signal}`);
    const onSpawnError = (error: Error): void => fail(`could not start unshare (${error.message})`);
    const timer = setTimeout(
      () => fail(`no answer within ${SETUP_TIMEOUT_MS} ms`),
      SETUP_TIMEOUT_MS,
    );
    const infoStream = holder.stdio[3] as NodeJS.ReadableStream | null;
    const cleanup = (): void => {
      clearTimeout(timer);
      holder.stdout?.off("data", onOutput);
      infoStream?.off("data", onInfo);
      holder.off("exit", onExit);
      holder.off("error", onSpawnError);
    };
    holder.stdout?.on("data", onOutput);
    holder.stderr?.on("data", onError);
    infoStream?.on("data", onInfo);
    holder.once("exit", onExit);
    holder.once("error", onSpawnError);
  });
}
