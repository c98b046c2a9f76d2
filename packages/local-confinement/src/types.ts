import type { ChildProcess } from "node:child_process";
import type { SandboxProcessExit } from "@open-managed-agents/sandbox";

/** Sandbox path (absolute, e.g. `/workspace`) → host directory. */
export type PathMounts = Readonly<Record<string, string>>;

/** How sandbox paths reach the process: a private mount namespace or literal prefix rewriting. */
export type PathMappingMode = "namespace" | "rewrite";

/** Environment variable holding the mount table as JSON in `rewrite` mode. */
export const PATH_MAP_ENV = "OPENMA_PATH_MAP";

/** Working directory used when none is given. */
export const DEFAULT_SANDBOX_CWD = "/workspace";

/** What one command needs besides its mounts. */
export interface MappedCommand {
  /** Program to run; looked up on `PATH` when not absolute. May name a sandbox path. */
  readonly command: string;
  readonly args?: readonly string[];
  /** Working directory as a sandbox path. @default "/workspace" */
  readonly cwd?: string;
  /** The complete environment of the process. @default process.env */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Aborting kills the process group with SIGKILL. */
  readonly signal?: AbortSignal;
}

/** Options of `spawnMapped`. */
export interface SpawnMappedOptions extends MappedCommand {
  /** Sandbox path → host directory. Host directories must exist. */
  readonly mounts: PathMounts;
  /** Forces a mapping mode; `auto` uses `detectPathMappingMode`. @default "auto" */
  readonly mapping?: PathMappingMode | "auto";
  /**
   * In `namespace` mode, runs the command in a mount namespace kept for this mount table (set up by
   * the first command, entered with `nsenter` by later ones) instead of building a new namespace per
   * command. Commands of one table then share their mount namespace, as commands of one container do.
   * @default true
   */
  readonly reuseNamespace?: boolean;
}

/** A running mapped process. */
export interface MappedProcess {
  /** The Node child process; its stdin, stdout and stderr are pipes. */
  readonly child: ChildProcess;
  readonly pid: number | null;
  readonly mode: PathMappingMode;
  /**
   * Signals the whole process group, also after its leader exited, so members it left running in
   * the background are reached. A gone group is not an error.
   */
  kill(signal?: NodeJS.Signals): void;
  /** Resolves once the process exited and its stdio closed; never rejects (spawn failures exit with code 127). */
  readonly exited: Promise<SandboxProcessExit>;
}
