import {
  NotFoundError,
  SandboxFailedError,
  shellQuote,
} from "@open-managed-agents/runtime-resource-contract";
import type { BridgeClient, BridgeExecEvent } from "../wire/bridge-client.js";
import { execCollect } from "./exec.js";
import { classifyPath } from "./paths.js";

/** Output bound for helper commands the driver runs itself. */
const HELPER_OUTPUT_BYTES = 64 * 1024;

/** File I/O of one bridge sandbox, over the file routes where the bridge allows them and exec elsewhere. */
export interface BridgeFiles {
  readStream(path: string, signal?: AbortSignal): Promise<ReadableStream<Uint8Array>>;
  readBytes(path: string, signal?: AbortSignal): Promise<Uint8Array>;
  writeBytes(path: string, content: Uint8Array, signal?: AbortSignal): Promise<void>;
  /** Runs a helper shell script and throws `sandbox_failed` on a non-zero exit. */
  run(script: string, signal?: AbortSignal): Promise<string>;
}

export function createBridgeFiles(
  client: BridgeClient,
  sandboxId: string,
  options: { readonly maxRequestBytes: number },
): BridgeFiles {
  const run = async (script: string, signal?: AbortSignal): Promise<string> => {
    // Helper scripts are written to be run again (scratch folders, overwrites, reads), so a reset connection is retried.
    const result = await execCollect(client, sandboxId, {
      command: "sh",
      args: ["-c", script],
      signal,
      maxOutputBytes: HELPER_OUTPUT_BYTES,
      retryUnreachable: true,
    });
    if (result.exitCode !== 0) {
      throw new SandboxFailedError({
        message: `sandbox helper command failed with exit code ${result.exitCode}: ${result.stderr.slice(0, 300)}`,
        context: { exitCode: result.exitCode },
      });
    }
    return result.stdout;
  };

  const assertFileExists = async (path: string, signal?: AbortSignal): Promise<void> => {
    const result = await execCollect(client, sandboxId, {
      command: "test",
      args: ["-f", path],
      signal,
      maxOutputBytes: HELPER_OUTPUT_BYTES,
      retryUnreachable: true,
    });
    if (result.exitCode !== 0)
      throw new NotFoundError({
        message: "file does not exist in the sandbox",
        context: { path: path.slice(0, 256) },
      });
  };

  const readStream = async (
    path: string,
    signal?: AbortSignal,
  ): Promise<ReadableStream<Uint8Array>> => {
    const { kind } = classifyPath(path);
    // Real bridges answer 200 with an empty body for a missing file, so existence is checked by exec.
    await assertFileExists(path, signal);
    if (kind === "workspace") return client.readFile(sandboxId, path, signal);
    // Outside /workspace the file routes are refused; stream the bytes base64-encoded through exec.
    const events = client.exec(sandboxId, { argv: ["base64", "-w", "0", path], signal });
    return base64EventsToBytes(events);
  };

  return {
    run,
    readStream,
    async readBytes(path, signal) {
      return new Uint8Array(await new Response(await readStream(path, signal)).arrayBuffer());
    },
    async writeBytes(path, content, signal) {
      const { kind } = classifyPath(path);
      const parent = path.slice(0, path.lastIndexOf("/"));
      if (content.byteLength > options.maxRequestBytes) {
        throw new SandboxFailedError({
          message: `file of ${content.byteLength} bytes exceeds the bridge request limit`,
          context: { limit: options.maxRequestBytes },
        });
      }
      if (kind === "workspace") {
        await run(`mkdir -p ${shellQuote(parent)}`, signal);
        await client.writeFile(sandboxId, path, content, signal);
        return;
      }
      // Stage under /workspace (the only writable file route), then move into place.
      const staging = `/workspace/.oma-staging-${crypto.randomUUID()}`;
      await client.writeFile(sandboxId, staging, content, signal);
      await run(
        `mkdir -p ${shellQuote(parent)} && mv -f ${shellQuote(staging)} ${shellQuote(path)}`,
        signal,
      );
    },
  };
}

/** Decodes a stream of base64 stdout events (as produced by `base64 -w 0`) into raw bytes. */
function base64EventsToBytes(events: AsyncGenerator<BridgeExecEvent>): ReadableStream<Uint8Array> {
  let carry = "";
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        const next = await events.next();
        if (next.done) {
          controller.error(
            new SandboxFailedError({ message: "file read ended without an exit status" }),
          );
          return;
        }
        const event = next.value;
        if (event.type === "exit") {
          if (event.exitCode !== 0) {
            controller.error(
              new SandboxFailedError({
                message: `file read failed with exit code ${event.exitCode}`,
                context: { exitCode: event.exitCode },
              }),
            );
            return;
          }
          if (carry) controller.enqueue(Buffer.from(carry, "base64"));
          controller.close();
          return;
        }
        if (event.type !== "stdout") continue;
        const text = carry + new TextDecoder().decode(event.data).replace(/\s+/g, "");
        const usable = text.length - (text.length % 4);
        carry = text.slice(usable);
        if (usable > 0) {
          controller.enqueue(Buffer.from(text.slice(0, usable), "base64"));
          return;
        }
      }
    },
    async cancel() {
      await events.return(undefined);
    },
  });
}
