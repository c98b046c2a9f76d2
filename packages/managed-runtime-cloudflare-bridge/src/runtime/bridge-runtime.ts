import {
  CapabilityUnsupportedError,
  LeaseLostError,
  ProviderMismatchError,
  type SandboxCheckpointHandle,
  SandboxFailedError,
  UnsupportedOperationError,
  shellQuote,
} from "@open-managed-agents/runtime-resource-contract";
import type { ManagedSandboxRuntime, SandboxDuplexProcess } from "@open-managed-agents/sandbox";
import type { BridgeClient } from "../wire/bridge-client.js";
import { stageEnvFile } from "./env-file.js";
import { buildArgv, demultiplex, execCollect } from "./exec.js";
import { createBridgeFiles } from "./files.js";
import { WORKSPACE_ROOT, assertWorkspaceCwd } from "./paths.js";

/** File that marks a container as the one this runtime started; outside `/workspace`, so never checkpointed. */
export function runtimeMarkerPath(sandboxId: string): string {
  return `/tmp/.oma-runtime-${sandboxId}`;
}

/** Writes the runtime marker; called once when a sandbox is created. */
export async function markRuntimeStarted(
  client: BridgeClient,
  sandboxId: string,
  signal?: AbortSignal,
): Promise<void> {
  const result = await execCollect(client, sandboxId, {
    command: "touch",
    args: [runtimeMarkerPath(sandboxId)],
    signal,
    maxOutputBytes: 4096,
  });
  if (result.exitCode !== 0) {
    throw new SandboxFailedError({
      message: `could not initialise the bridge sandbox (exit ${result.exitCode})`,
      context: { exitCode: result.exitCode },
    });
  }
}

/** A checkpoint fetched, verified and inspected, ready to be sent to a sandbox. */
export interface PreparedRestore {
  /** Archive bytes. */
  readonly size: number;
  /** Hydrates `/workspace` of a sandbox with the archive. */
  send(sandboxId: string, signal?: AbortSignal): Promise<void>;
  /** Releases the local copy. Idempotent. */
  dispose(): Promise<void>;
}

/** Stores and restores `/workspace` checkpoints of one sandbox. */
export interface BridgeCheckpointer {
  /** With `sessionId`, checkpoints incrementally into the session's own blobs; without, as one full tar. */
  checkpoint(input: {
    readonly sandboxId: string;
    readonly name?: string;
    readonly sessionId?: string;
    readonly signal?: AbortSignal;
  }): Promise<SandboxCheckpointHandle>;
  /**
   * Fetches, verifies and inspects a checkpoint without touching any sandbox; refusals throw here. With
   * `sessionId`, an incremental checkpoint of another session is refused.
   */
  prepareRestore(input: {
    readonly handle: SandboxCheckpointHandle;
    readonly sessionId?: string;
    readonly signal?: AbortSignal;
  }): Promise<PreparedRestore>;
  restore(input: {
    readonly sandboxId: string;
    readonly handle: SandboxCheckpointHandle;
    readonly sessionId?: string;
    readonly signal?: AbortSignal;
  }): Promise<void>;
}

/** Options of {@link createBridgeRuntime}. */
export interface BridgeRuntimeOptions {
  readonly provider: string;
  readonly client: BridgeClient;
  readonly sandboxId: string;
  /** Session the runtime serves, when known: its checkpoints are incremental and restores stay in it. */
  readonly sessionId?: string;
  readonly checkpointer: BridgeCheckpointer;
  /** Largest single request body (file PUT, hydrate). */
  readonly maxRequestBytes: number;
  /** Output kept by `exec`. */
  readonly maxExecOutputBytes: number;
}

/**
 * One bridge sandbox as a managed runtime. The bridge has no provider lease, no stdin and no suspend:
 * `renewLease` is a liveness check, stdin writes fail closed, `suspend` is refused.
 */
export function createBridgeRuntime(options: BridgeRuntimeOptions): ManagedSandboxRuntime {
  const { client, sandboxId, provider } = options;
  const files = createBridgeFiles(client, sandboxId, { maxRequestBytes: options.maxRequestBytes });

  // A bridge starts a fresh container for a known id on any call after eviction, sleep or a delete by
  // another driver instance, so "running" alone would present an empty container as the same runtime.
  // The marker written at start tells them apart; a replacement is deleted at once, or it would run on
  // unowned (this call started it) and the id would stay assigned to it.
  const holdsOwnContainer = async (): Promise<boolean> => {
    const probe = await execCollect(client, sandboxId, {
      command: "test",
      args: ["-f", runtimeMarkerPath(sandboxId)],
      maxOutputBytes: 4096,
    });
    if (probe.exitCode === 0) return true;
    await client.destroy(sandboxId).catch(() => undefined);
    return false;
  };

  return {
    runtimeHandle: () => ({ provider, runtimeId: sandboxId }),
    runtimeCapabilities: () => ({ lease: false, suspend: [], checkpoint: ["filesystem"] }),

    async status() {
      // The bridge answers `running` by starting (and assigning) a container for the id when none runs, and
      // reports false when that container is not ready in time: a "stopped" answer deletes whatever the
      // question left behind, since only a replacement can be assigned to the id by then.
      if (!(await client.running(sandboxId))) {
        await client.destroy(sandboxId).catch(() => undefined);
        return "stopped";
      }
      return (await holdsOwnContainer()) ? "running" : "stopped";
    },

    async renewLease() {
      if (!(await holdsOwnContainer())) {
        throw new LeaseLostError({
          message: "bridge sandbox was stopped or replaced; its files are gone",
          context: { runtimeId: sandboxId },
        });
      }
    },

    async suspend() {
      throw new UnsupportedOperationError({
        message: "the Cloudflare Sandbox Bridge cannot suspend a sandbox",
        context: { provider },
      });
    },

    async resume(handle, resumeOptions) {
      if (handle.provider !== provider) {
        throw new ProviderMismatchError({
          message: "checkpoint belongs to another provider",
          context: { expected: provider, actual: handle.provider },
        });
      }
      await options.checkpointer.restore({
        sandboxId,
        handle,
        sessionId: options.sessionId,
        signal: resumeOptions?.signal,
      });
    },

    checkpoint({ kind, name, signal }) {
      if (kind !== "filesystem") {
        return Promise.reject(
          new UnsupportedOperationError({
            message: "the bridge checkpoints the filesystem only",
            context: { kind },
          }),
        );
      }
      return options.checkpointer.checkpoint({
        sandboxId,
        name,
        sessionId: options.sessionId,
        signal,
      });
    },

    destroy: () => client.destroy(sandboxId),

    async exec(command, execOptions = {}) {
      const cwd = execOptions.cwd ?? WORKSPACE_ROOT;
      assertWorkspaceCwd(cwd);
      const envFile = hasEntries(execOptions.env)
        ? await stageEnvFile(files, execOptions.env, execOptions.signal)
        : null;
      let exitCode: number | null = null;
      try {
        const result = await execCollect(client, sandboxId, {
          command: "sh",
          args: ["-c", command],
          ...(envFile ? { envFile: envFile.path } : {}),
          cwd,
          timeoutMs: execOptions.timeoutMs,
          signal: execOptions.signal,
          maxOutputBytes: options.maxExecOutputBytes,
        });
        exitCode = result.exitCode;
        return result;
      } finally {
        // The launcher deleted it unless the command never started.
        await envFile?.discardUnlessRead(exitCode);
      }
    },

    async readFile(path) {
      return new TextDecoder().decode(await files.readBytes(path));
    },
    async writeFile(path, content) {
      await files.writeBytes(path, new TextEncoder().encode(content));
    },
    readFileBytes: (path) => files.readBytes(path),
    writeFileBytes: (path, content) => files.writeBytes(path, content),
    readFileStream: (path) => files.readStream(path),

    async spawnDuplexProcess(spec): Promise<SandboxDuplexProcess> {
      const cwd = spec.cwd ?? WORKSPACE_ROOT;
      assertWorkspaceCwd(cwd);
      const controller = new AbortController();
      // The process records its pid so `kill` can reach it inside the sandbox, not only drop the stream.
      const pidFile = `/tmp/oma-process-${crypto.randomUUID()}.pid`;
      const envFile = hasEntries(spec.env) ? await stageEnvFile(files, spec.env) : null;
      const argv = [
        "sh",
        "-c",
        'echo $$ > "$0"; exec "$@"',
        pidFile,
        ...buildArgv({
          command: spec.command,
          args: spec.args,
          ...(envFile ? { envFile: envFile.path } : {}),
        }),
      ];
      const events = client.exec(sandboxId, { argv, cwd, signal: controller.signal });
      const { stdout, stderr, exitCode } = demultiplex(events);
      let killedWith: string | null = null;
      // A kill still in flight when the process ends holds its exit back: the caller's next step may be
      // deleting the sandbox, and a call that reaches the bridge's Sandbox Durable Object after the delete
      // starts the container again, with nothing left to track it.
      let ended = false;
      let killing: Promise<void> = Promise.resolve();
      const exited = exitCode.then(
        async (code) => {
          ended = true;
          await killing;
          return { code, signal: null };
        },
        async (error: unknown) => {
          ended = true;
          if (!killedWith) throw error;
          await killing;
          return { code: null, signal: killedWith };
        },
      );
      // Keep an unobserved failure from becoming an unhandled rejection; callers read `exited`. A killed
      // process's env file goes with the kill's own call.
      exited.then(
        (end) => void (killedWith === null && envFile?.discardUnlessRead(end.code)),
        () => void envFile?.discard(),
      );
      const stdin = new WritableStream<Uint8Array>({
        write() {
          throw new CapabilityUnsupportedError({
            message:
              "the Cloudflare Sandbox Bridge carries no stdin for exec (interactive_stdin_without_pty); use the PTY route",
            context: { capability: "interactive_stdin_without_pty" },
          });
        },
      });
      return {
        stdin,
        stdout,
        stderr,
        exited,
        kill(signal = "SIGTERM") {
          // Once it ended there is nothing to stop, and a call now would only race the sandbox's delete.
          if (killedWith || ended) return;
          killedWith = signal;
          const name = signal === "SIGKILL" ? "KILL" : "TERM";
          killing = files
            .run(
              `kill -s ${name} "$(cat ${pidFile})" 2>/dev/null; rm -f ${pidFile}${envFile ? ` ${shellQuote(envFile.path)}` : ""}`,
            )
            .then(
              () => undefined,
              () => undefined,
            )
            .finally(() => controller.abort());
        },
      };
    },
  };
}

function hasEntries(
  env: Readonly<Record<string, string>> | undefined,
): env is Readonly<Record<string, string>> {
  return env !== undefined && Object.keys(env).length > 0;
}
