import { spawn } from "node:child_process";
import { wrapChild } from "./child-process.js";
import {
  createMountSetup,
  findExecutable,
  nsenterCommandArgs,
  unshareCommandArgs,
} from "./mounts.js";
import { createPathRewriter, mapPath, normalizeSandboxPath } from "./paths.js";
import {
  DEFAULT_SANDBOX_CWD,
  type MappedCommand,
  type MappedProcess,
  PATH_MAP_ENV,
  type PathMounts,
} from "./types.js";

/** A command with its working directory normalized and its environment filled in. */
interface PreparedCommand {
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env: Record<string, string | undefined>;
}

function prepare(command: MappedCommand): PreparedCommand {
  return {
    command: command.command,
    args: command.args ?? [],
    cwd: normalizeSandboxPath(command.cwd ?? DEFAULT_SANDBOX_CWD, "/"),
    env: { ...(command.env ?? process.env) },
  };
}

/** Runs the command on the host with sandbox path prefixes rewritten to host directories. */
export function spawnRewritten(mounts: PathMounts, command: MappedCommand): MappedProcess {
  const prepared = prepare(command);
  const rewrite = createPathRewriter(mounts);
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(prepared.env))
    if (value !== undefined) env[key] = rewrite(value);
  env[PATH_MAP_ENV] = JSON.stringify(mounts);
  const child = spawn(rewrite(prepared.command), prepared.args.map(rewrite), {
    cwd: mapPath(prepared.cwd, mounts, "/", { mode: "rewrite" }),
    env,
    detached: true,
    stdio: "pipe",
  });
  return wrapChild(child, "rewrite", command.signal);
}

/**
 * Runs the command in a mount namespace of its own, built for it by `unshare`. The wrapper execs
 * the command, so the pid stays the command's own and exit codes pass through untouched.
 */
export function spawnUnshared(mounts: PathMounts, command: MappedCommand): MappedProcess {
  const prepared = prepare(command);
  const setup = createMountSetup(mounts);
  const args = unshareCommandArgs(setup, prepared.cwd, prepared.command, prepared.args);
  const child = spawn(findExecutable("unshare") ?? "unshare", args, {
    cwd: "/",
    env: prepared.env,
    detached: true,
    stdio: "pipe",
  });
  return wrapChild(child, "namespace", command.signal, setup.cleanup);
}

/** Runs the command inside the kept mount namespace open as `namespaceFd`, entered with `nsenter`. */
export function spawnEntered(namespaceFd: number, command: MappedCommand): MappedProcess {
  const prepared = prepare(command);
  const child = spawn(
    findExecutable("nsenter") ?? "nsenter",
    nsenterCommandArgs(prepared.cwd, prepared.command, prepared.args),
    {
      cwd: "/",
      env: prepared.env,
      detached: true,
      // The namespace reaches the child as its descriptor 3 at fork time, so closing or reusing the
      // server's descriptor later can never send a starting command into another namespace.
      stdio: ["pipe", "pipe", "pipe", namespaceFd],
    },
  );
  return wrapChild(child, "namespace", command.signal);
}
