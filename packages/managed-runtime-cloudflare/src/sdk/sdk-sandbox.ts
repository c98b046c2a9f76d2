import {
  AbortedError,
  SandboxFailedError,
  UpstreamProtocolError,
  WORKSPACE_MOUNT_PATH,
} from "@open-managed-agents/runtime-resource-contract";
import { withDeadline } from "@open-managed-agents/runtime-utils";
import { shellQuote } from "@open-managed-agents/sandbox";
import * as z from "zod";
import type {
  CloudflareBackupHandle,
  CloudflareContainerState,
  CloudflareProcessState,
  CloudflareSandbox,
} from "../sandbox/cloudflare-sandbox.js";
import { base64ToBytes, bytesToBase64 } from "../base64.js";
import { parseProcessLogStream } from "./process-log-stream.js";
import type { CloudflareSandboxStub } from "./sandbox-stub.js";
import { callSdk, isSdkNotFound, sdkFailure } from "./sdk-errors.js";

/** Options of {@link createCloudflareSdkSandbox}. */
export interface CloudflareSdkSandboxOptions {
  /**
   * Create backups in the bound `BACKUP_BUCKET` through the Durable Object (`localBucket: true`) instead of
   * presigned R2 uploads. Local development only: restores extract instead of mounting an overlay.
   * @default false
   */
  readonly localBackups?: boolean;
  /** Deadline of `destroy`, which can hang when the platform's control plane does. @default 30_000 */
  readonly destroyTimeoutMs?: number;
}

const containerStateSchema = z
  .object({ status: z.enum(["running", "healthy", "stopping", "stopped", "stopped_with_code"]) })
  .passthrough();
const processStatusSchema = z.enum([
  "starting",
  "running",
  "completed",
  "failed",
  "killed",
  "error",
]);
const backupSchema = z.object({
  id: z.string().min(1),
  dir: z.string().min(1),
  localBucket: z.boolean().optional(),
});
const NOT_MOUNTED = /no active mount|not mounted/i;

/**
 * Turns a `@cloudflare/sandbox` 0.12 stub into the driver's {@link CloudflareSandbox}. Commands run in
 * `sh -c` so that an `exit` never ends the SDK's session shell; deadlines are enforced here, not only
 * asked of the container; every SDK error becomes a typed contract error.
 */
export function createCloudflareSdkSandbox(
  stub: CloudflareSandboxStub,
  options: CloudflareSdkSandboxOptions = {},
): CloudflareSandbox {
  const destroyTimeoutMs = options.destroyTimeoutMs ?? 30_000;
  let destroying: Promise<void> | undefined;

  return {
    async exec(command, { timeoutMs, cwd, env, signal }) {
      if (signal?.aborted)
        throw new AbortedError({ message: "exec was aborted before it started" });
      const call = callSdk("exec", () =>
        stub.exec(`sh -c ${shellQuote(command)}`, {
          timeout: timeoutMs,
          cwd: cwd ?? WORKSPACE_MOUNT_PATH,
          ...(env ? { env: { ...env } } : {}),
        }),
      );
      const result = await withDeadline(call, {
        ms: timeoutMs,
        operation: "exec",
        ...(signal ? { signal, abortError: abortedError("exec") } : {}),
      });
      return { exitCode: result.exitCode, stdout: result.stdout, stderr: result.stderr };
    },

    async startProcess(command, processOptions = {}) {
      const started = await callSdk("startProcess", () =>
        stub.startProcess(command, {
          autoCleanup: false,
          cwd: processOptions.cwd ?? WORKSPACE_MOUNT_PATH,
          ...(processOptions.processId ? { processId: processOptions.processId } : {}),
          ...(processOptions.env ? { env: { ...processOptions.env } } : {}),
        }),
      );
      if (typeof started?.id !== "string" || started.id === "")
        throw new UpstreamProtocolError({ message: "startProcess returned no process id" });
      return { id: started.id, pid: typeof started.pid === "number" ? started.pid : null };
    },

    async *processLogs(processId, signal) {
      const stream = await callSdk("streamProcessLogs", () => stub.streamProcessLogs(processId));
      yield* parseProcessLogStream(stream, signal);
    },

    async processStatus(processId): Promise<CloudflareProcessState | null> {
      let process;
      try {
        process = await stub.getProcess(processId);
      } catch (error) {
        if (isSdkNotFound(error)) return null;
        throw sdkFailure(error, "getProcess");
      }
      if (!process) return null;
      const status = processStatusSchema.safeParse(process.status);
      return {
        status: status.success ? status.data : "error",
        exitCode: typeof process.exitCode === "number" ? process.exitCode : null,
      };
    },

    async killProcess(processId, signal) {
      try {
        await stub.killProcess(processId, signal);
      } catch (error) {
        if (!isSdkNotFound(error)) throw sdkFailure(error, "killProcess");
      }
    },

    async readFile(path) {
      const result = await callSdk("readFile", () => stub.readFile(path, { encoding: "base64" }));
      if (typeof result?.content !== "string")
        throw new UpstreamProtocolError({ message: `readFile ${path} returned no content` });
      return result.encoding === "base64"
        ? base64ToBytes(result.content)
        : new TextEncoder().encode(result.content);
    },

    async writeFile(path, content) {
      const parent = path.slice(0, path.lastIndexOf("/"));
      if (parent !== "") await callSdk("mkdir", () => stub.mkdir(parent, { recursive: true }));
      await callSdk("writeFile", () =>
        stub.writeFile(path, bytesToBase64(content), { encoding: "base64" }),
      );
    },

    async createBackup({ dir, name, ttlSec }) {
      const created = await callSdk("createBackup", () =>
        stub.createBackup({
          dir,
          ttl: ttlSec,
          ...(name ? { name } : {}),
          ...(options.localBackups ? { localBucket: true } : {}),
        }),
      );
      const parsed = backupSchema.safeParse(created);
      if (!parsed.success)
        throw new UpstreamProtocolError({
          message: "createBackup returned a malformed backup handle",
          cause: parsed.error,
        });
      return parsed.data;
    },

    async restoreBackup(handle: CloudflareBackupHandle) {
      const result = await callSdk("restoreBackup", () => stub.restoreBackup({ ...handle }));
      if (!result?.success)
        throw new SandboxFailedError({
          message: `restoring backup ${handle.id} into ${handle.dir} did not succeed`,
          context: { backupId: handle.id },
        });
    },

    async mountBucket({ bucket, mountPath, endpoint, prefix, readOnly }) {
      const options = {
        endpoint,
        prefix,
        provider: "r2" as const,
        credentialProxy: true,
        ...(readOnly ? { readOnly: true } : {}),
      };
      await callSdk("mountBucket", () => stub.mountBucket(bucket, mountPath, options));
    },

    async unmountBucket(mountPath) {
      try {
        await stub.unmountBucket(mountPath);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        if (!NOT_MOUNTED.test(message)) throw sdkFailure(error, "unmountBucket");
      }
    },

    async renewActivityTimeout() {
      await callSdk("renewActivityTimeout", async () => stub.renewActivityTimeout());
    },

    async containerState(): Promise<CloudflareContainerState> {
      const state = await callSdk("getState", () => stub.getState());
      const parsed = containerStateSchema.safeParse(state);
      if (!parsed.success)
        throw new UpstreamProtocolError({
          message: "getState returned an unknown container state",
          cause: parsed.error,
        });
      return parsed.data.status;
    },

    async setOutboundHandler(handler, params) {
      await callSdk("setOutboundHandler", () => stub.setOutboundHandler(handler, { ...params }));
    },

    destroy() {
      destroying ??= withDeadline(
        callSdk("destroy", () => stub.destroy()),
        { ms: destroyTimeoutMs, operation: "destroy" },
      ).finally(() => {
        destroying = undefined;
      });
      return destroying;
    },
  };
}

// The SDK call was aborted by the caller: an `aborted` error naming it, whatever the signal's reason.
const abortedError = (operation: string) => (): AbortedError =>
  new AbortedError({ message: `${operation} was aborted`, context: { operation } });
