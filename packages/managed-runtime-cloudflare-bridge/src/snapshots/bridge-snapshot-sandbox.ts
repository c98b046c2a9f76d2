import { SandboxFailedError } from "@open-managed-agents/runtime-resource-contract";
import type { SnapshotSandbox } from "@open-managed-agents/workspace-snapshots";
import { execCollect } from "../runtime/exec.js";
import { WORKSPACE_ROOT } from "../runtime/paths.js";
import type { BridgeClient } from "../wire/bridge-client.js";

/** Output kept of one snapshot script: its summary lines and the first differing record, never file data. */
const SCRIPT_OUTPUT_BYTES = 1024 * 1024;

/**
 * The snapshot port over one bridge sandbox: scripts run as `sh -c` execs and files travel by the file routes.
 * The bridge's file routes reach only `/workspace`, so snapshots of a bridge sandbox keep their scratch folder
 * there (the snapshot package leaves it out of every listing), and a file elsewhere is refused.
 */
export function createBridgeSnapshotSandbox(
  client: BridgeClient,
  sandboxId: string,
): SnapshotSandbox {
  const inWorkspace = (path: string) => {
    if (!path.startsWith(`${WORKSPACE_ROOT}/`))
      throw new SandboxFailedError({
        message: "the bridge reads and writes files only under /workspace",
        context: { path: path.slice(0, 256) },
      });
    return path;
  };
  return {
    async run(name, script, args, signal) {
      const result = await execCollect(client, sandboxId, {
        command: "sh",
        args: ["-c", script, name, ...args],
        maxOutputBytes: SCRIPT_OUTPUT_BYTES,
        signal,
      });
      return { exitCode: result.exitCode, stdout: result.stdout, stderr: result.stderr };
    },
    async *readFile(path, signal) {
      const body = await client.readFile(sandboxId, inWorkspace(path), signal);
      yield* body as unknown as AsyncIterable<Uint8Array>;
    },
    async writeFile(path, body, signal) {
      await client.writeFile(sandboxId, inWorkspace(path), body, signal);
    },
  };
}
