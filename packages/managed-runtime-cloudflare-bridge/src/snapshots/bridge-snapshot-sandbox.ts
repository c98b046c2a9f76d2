import { NotFoundError, SandboxFailedError } from "@open-managed-agents/runtime-resource-contract";
import type { SnapshotSandbox } from "@open-managed-agents/workspace-snapshots";
import { execCollect } from "../runtime/exec.js";
import { WORKSPACE_ROOT } from "../runtime/paths.js";
import type { BridgeClient } from "../wire/bridge-client.js";

/** Output kept of one snapshot script: its summary lines and the first differing record, never file data. */
const SCRIPT_OUTPUT_BYTES = 1024 * 1024;
/** Largest file read outside `/workspace` (the listing cache's snapshot id), base64 through exec. */
const SMALL_FILE_BYTES = 64 * 1024;

/**
 * The snapshot port over one bridge sandbox: scripts run as `sh -c` execs, files under `/workspace` travel by
 * the file routes, and small files elsewhere (the listing cache's snapshot id) are read through exec. The
 * bridge's file routes reach only `/workspace`, so snapshots of a bridge sandbox keep their scratch folder
 * there (the snapshot package leaves it out of every listing) and write nothing elsewhere.
 */
export function createBridgeSnapshotSandbox(
  client: BridgeClient,
  sandboxId: string,
): SnapshotSandbox {
  const inWorkspace = (path: string) => path.startsWith(`${WORKSPACE_ROOT}/`);
  return {
    async run(name, script, args, signal) {
      const result = await execCollect(client, sandboxId, {
        command: "sh",
        args: ["-c", script, name, ...args],
        maxOutputBytes: SCRIPT_OUTPUT_BYTES,
        ...(signal ? { signal } : {}),
      });
      return { exitCode: result.exitCode, stdout: result.stdout, stderr: result.stderr };
    },
    async *readFile(path, signal) {
      if (inWorkspace(path)) {
        yield* (await client.readFile(
          sandboxId,
          path,
          signal,
        )) as unknown as AsyncIterable<Uint8Array>;
        return;
      }
      const result = await execCollect(client, sandboxId, {
        command: "sh",
        args: [
          "-c",
          `[ "$(wc -c < "$1")" -le ${SMALL_FILE_BYTES} ] && base64 -w 0 "$1"`,
          "read",
          path,
        ],
        maxOutputBytes: SMALL_FILE_BYTES * 2,
        ...(signal ? { signal } : {}),
      });
      if (result.exitCode !== 0)
        throw new NotFoundError({
          message: "no such small file in the sandbox",
          context: { path: path.slice(0, 256) },
        });
      yield Buffer.from(result.stdout, "base64");
    },
    async writeFile(path, body, signal) {
      if (!inWorkspace(path))
        throw new SandboxFailedError({
          message: "the bridge writes files only under /workspace",
          context: { path: path.slice(0, 256) },
        });
      await client.writeFile(sandboxId, path, body, signal);
    },
  };
}
