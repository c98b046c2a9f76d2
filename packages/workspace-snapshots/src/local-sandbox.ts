import { spawn } from "node:child_process";
import { createReadStream } from "node:fs";
import { writeFile } from "node:fs/promises";
import { childEnvironment } from "@open-managed-agents/runtime-utils/node";
import type { SandboxRunResult, SnapshotSandbox } from "./sandbox-port.js";

/** Output kept of a run, each stream. */
const MAX_OUTPUT_BYTES = 1024 * 1024;

/**
 * A {@link SnapshotSandbox} over this machine: scripts run as child processes of `sh`, files are local files.
 * For tests and for a workspace on the same host; it confines nothing, so never point it at a sandbox's tree
 * from a process that must not trust that tree's owner.
 */
export function createLocalSnapshotSandbox(): SnapshotSandbox {
  return {
    run(name, script, args, signal) {
      return new Promise<SandboxRunResult>((resolve, reject) => {
        const child = spawn("sh", ["-c", script, name, ...args], {
          env: childEnvironment(),
          stdio: ["ignore", "pipe", "pipe"],
          ...(signal ? { signal } : {}),
        });
        const collect = (stream: NodeJS.ReadableStream) => {
          const chunks: Buffer[] = [];
          let bytes = 0;
          stream.on("data", (chunk: Buffer) => {
            if (bytes < MAX_OUTPUT_BYTES) chunks.push(chunk);
            bytes += chunk.length;
          });
          return () => Buffer.concat(chunks).subarray(0, MAX_OUTPUT_BYTES).toString("utf8");
        };
        const stdout = collect(child.stdout);
        const stderr = collect(child.stderr);
        child.once("error", reject);
        child.once("close", (code) =>
          resolve({ exitCode: code ?? 1, stdout: stdout(), stderr: stderr() }),
        );
      });
    },
    readFile(path, signal) {
      return createReadStream(path, signal ? { signal } : {});
    },
    async writeFile(path, body, signal) {
      await writeFile(path, body, signal ? { signal } : {});
    },
  };
}
