/**
 * The local-subprocess sandbox provider: runtimes are host directories and commands are local
 * processes, each runtime's in its own bubblewrap confinement (`createConfinedRoot` of
 * `@open-managed-agents/local-confinement`: own namespaces, no capabilities, a copy-on-write root)
 * unless `confinement: "unconfined-unsafe"` is asked for. Confined, it is a local provider for driver
 * development and local stacks; unconfined, its commands are the host's own, so it loads only when
 * `NODE_ENV` is `test`.
 *
 * @module
 */
import { randomUUID } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as z from "zod";
import {
  InvalidConfigError,
  InvalidRequestError,
  UnsupportedOperationError,
  nonEmptyString,
  parseRecord,
} from "@open-managed-agents/runtime-resource-contract";
import { type ConfinementMode, type PathMounts, assertConfinementAvailable } from "../index.js";
import type {
  SandboxFactory,
  SandboxFactoryContext,
  SandboxProviderPort,
} from "@open-managed-agents/sandbox";
import { createLocalCheckpointStore } from "./local-checkpoint-store.js";
import {
  type LocalSubprocessRuntime,
  createLocalRuntime,
  parseOwnCheckpointHandle,
} from "./local-subprocess-runtime.js";

export type { LocalSubprocessRuntime } from "./local-subprocess-runtime.js";

/** Provider id of every handle this adapter issues. */
export const LOCAL_SUBPROCESS_PROVIDER = "local-subprocess";

/** Sandbox path where session outputs are mounted. */
export const SESSION_OUTPUTS_PATH = "/mnt/session/outputs";
/** Sandbox path where the memory root is mounted when the factory context names one. */
export const MEMORY_PATH = "/mnt/memory";

/** Options of {@link createLocalSubprocessSandboxProvider}. */
export interface LocalSubprocessSandboxProviderOptions {
  /** Host directory holding runtimes and checkpoints. @default `<os tmpdir>/openma-local-subprocess` */
  readonly rootDir?: string;
  /**
   * Provider id carried by every runtime and checkpoint handle, e.g. the id a driver under development
   * registers. Restore and connect refuse handles of any other provider. @default "local-subprocess"
   */
  readonly provider?: string;
  /** Deadline of `exec` when the call names none. @default 600_000 */
  readonly defaultTimeoutMs?: number;
  /** Most bytes of stdout plus stderr one `exec` collects before it fails with `limit_exceeded`. @default 67_108_864 */
  readonly maxOutputBytes?: number;
  /**
   * `bubblewrap` runs each runtime's commands in its own confinement (own namespaces, no capabilities, a
   * copy-on-write root) and fails with `capability_unsupported` where bubblewrap cannot run;
   * `unconfined-unsafe` runs them on the host with the host user's rights. @default "bubblewrap"
   */
  readonly confinement?: ConfinementMode;
}

/** A provider of local-subprocess runtimes. */
export type LocalSubprocessSandboxProvider = SandboxProviderPort<LocalSubprocessRuntime> & {
  /** Host directory holding this provider's runtimes and checkpoints. */
  readonly rootDir: string;
};

const optionsSchema = z
  .object({
    rootDir: nonEmptyString.optional(),
    provider: nonEmptyString.optional(),
    defaultTimeoutMs: z.number().int().positive().optional(),
    maxOutputBytes: z.number().int().positive().optional(),
    confinement: z.enum(["bubblewrap", "unconfined-unsafe"]).optional(),
  })
  .strict();

const contextSchema = z.object({
  sessionId: nonEmptyString,
  workdir: nonEmptyString.refine(
    (value) => value.startsWith("/") && value !== "/",
    "must be an absolute sandbox path other than /",
  ),
  memoryRoot: nonEmptyString.optional(),
  outputsRoot: nonEmptyString.optional(),
});

const RUNTIME_ID = /^local-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Throws `invalid_config` for an unconfined provider unless `NODE_ENV` is `test`: unconfined runtimes share
 * everything of the host, so they must not be reachable from a production configuration. Confined ones
 * (bubblewrap, the default) load anywhere.
 */
export function assertLocalSubprocessAllowed(
  confinement: "bubblewrap" | "unconfined-unsafe",
): void {
  if (confinement === "unconfined-unsafe" && process.env.NODE_ENV !== "test") {
    throw new InvalidConfigError({
      message:
        'an unconfined local-subprocess sandbox runs commands as the host itself; confinement "unconfined-unsafe" loads only when NODE_ENV=test',
      context: { field: "confinement", nodeEnv: process.env.NODE_ENV ?? null },
    });
  }
}

/** Creates the provider. Validates options once; throws `invalid_config` naming the bad field. */
export function createLocalSubprocessSandboxProvider(
  options: LocalSubprocessSandboxProviderOptions = {},
): LocalSubprocessSandboxProvider {
  const settings = parseRecord(optionsSchema, options, {
    record: "local-subprocess provider options",
    code: "invalid_config",
  });
  const provider = settings.provider ?? LOCAL_SUBPROCESS_PROVIDER;
  const rootDir = settings.rootDir ?? join(tmpdir(), "openma-local-subprocess");
  const checkpoints = createLocalCheckpointStore(join(rootDir, "checkpoints"));
  const confinement = settings.confinement ?? "bubblewrap";
  assertLocalSubprocessAllowed(confinement);
  if (confinement === "bubblewrap") assertConfinementAvailable();

  const runtimeFor = (
    runtimeId: string,
    rawContext: SandboxFactoryContext,
  ): LocalSubprocessRuntime => {
    const context = parseRecord(contextSchema, rawContext, { record: "sandbox factory context" });
    const runtimeDir = join(rootDir, "runtimes", runtimeId);
    const mounts: Record<string, string> = {
      [context.workdir]: join(runtimeDir, "workspace"),
      [SESSION_OUTPUTS_PATH]: context.outputsRoot ?? join(runtimeDir, "outputs"),
    };
    if (context.memoryRoot) mounts[MEMORY_PATH] = context.memoryRoot;
    return createLocalRuntime({
      provider,
      runtimeId,
      runtimeDir,
      workdir: context.workdir,
      mounts: mounts satisfies PathMounts,
      checkpoints,
      defaultTimeoutMs: settings.defaultTimeoutMs ?? 600_000,
      maxOutputBytes: settings.maxOutputBytes ?? 64 * 1024 * 1024,
      confinement,
    });
  };

  const create = async (context: SandboxFactoryContext): Promise<LocalSubprocessRuntime> => {
    const runtimeId = `local-${randomUUID()}`;
    const runtime = runtimeFor(runtimeId, context);
    const runtimeDir = join(rootDir, "runtimes", runtimeId);
    await mkdir(join(runtimeDir, "workspace"), { recursive: true });
    await mkdir(context.outputsRoot ?? join(runtimeDir, "outputs"), { recursive: true });
    return runtime;
  };

  return {
    provider,
    rootDir,
    create,
    async resume(handle, context) {
      const parsed = parseOwnCheckpointHandle(handle, provider);
      if (parsed.scope === "runtime") {
        throw new UnsupportedOperationError({
          message:
            "local-subprocess runtimes are never retained, so runtime-scoped handles cannot be resumed",
          context: { checkpointId: parsed.checkpointId },
        });
      }
      return this.restore(parsed, context);
    },
    async restore(checkpoint, context) {
      const parsed = parseOwnCheckpointHandle(checkpoint, provider);
      const runtime = await create(context);
      try {
        await runtime.resume(parsed);
      } catch (error) {
        await runtime.destroy();
        throw error;
      }
      return runtime;
    },
    async connect(runtimeId, context) {
      if (!RUNTIME_ID.test(runtimeId)) {
        throw new InvalidRequestError({
          message: `not a local-subprocess runtime id: ${runtimeId.slice(0, 80)}`,
          context: { runtimeId: runtimeId.slice(0, 80) },
        });
      }
      // A destroyed runtime still connects: status() reports "stopped" and destroy() succeeds, so reaping is idempotent.
      return runtimeFor(runtimeId, context);
    },
  };
}

/**
 * Tool-sandbox factory: creates one local-subprocess runtime for the session. Reads
 * `OPENMA_LOCAL_SUBPROCESS_ROOT` (host directory for runtimes) from `env`; loads only when `NODE_ENV` is `test`.
 */
export const sandboxFactory: SandboxFactory = async (context, env) => {
  const rootDir = env.OPENMA_LOCAL_SUBPROCESS_ROOT;
  return createLocalSubprocessSandboxProvider(rootDir ? { rootDir } : {}).create(context);
};
