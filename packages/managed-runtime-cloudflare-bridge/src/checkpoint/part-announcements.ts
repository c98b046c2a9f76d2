import { SandboxFailedError } from "@open-managed-agents/runtime-resource-contract";
import type { BridgeClient } from "../wire/bridge-client.js";

/** A part the sandbox finished writing: its file name in the scratch folder, its index and its size. */
export interface AnnouncedPart {
  readonly name: string;
  readonly index: number;
  readonly size: number;
}

/** Stderr kept for the error message of a failed command. */
const STDERR_BYTES = 16 * 1024;
/** A line of output longer than this is no part announcement. */
const LINE_BYTES = 4096;

/**
 * Runs `script` (a `split --filter` pipeline printing `<prefix><6 digits> <size>` per finished part) and yields
 * each part as its line arrives on the exec's output, while the command still runs. Ends when the command
 * exits 0; a non-zero exit is `sandbox_failed` with the start of its stderr.
 */
export async function* readAnnouncedParts(
  client: BridgeClient,
  sandboxId: string,
  script: string,
  prefix: string,
  signal: AbortSignal,
): AsyncGenerator<AnnouncedPart> {
  const decoder = new TextDecoder();
  let line = "";
  let stderr = "";
  for await (const event of client.exec(sandboxId, {
    argv: ["sh", "-c", script],
    signal,
    retryUnreachable: true,
  })) {
    if (event.type === "exit") {
      if (event.exitCode !== 0) {
        throw new SandboxFailedError({
          message: `archiving in the sandbox failed with exit code ${event.exitCode}: ${stderr.slice(0, 300)}`,
          context: { exitCode: event.exitCode },
        });
      }
      return;
    }
    if (event.type === "stderr") {
      if (stderr.length < STDERR_BYTES) stderr += decoder.decode(event.data);
      continue;
    }
    line += decoder.decode(event.data, { stream: true });
    let newline = line.indexOf("\n");
    while (newline >= 0) {
      const part = parseAnnouncement(line.slice(0, newline), prefix);
      if (part) yield part;
      line = line.slice(newline + 1);
      newline = line.indexOf("\n");
    }
    if (line.length > LINE_BYTES)
      throw new SandboxFailedError({
        message: "archiving in the sandbox printed an unexpected line",
      });
  }
}

function parseAnnouncement(line: string, prefix: string): AnnouncedPart | null {
  if (!line.startsWith(prefix)) return null;
  const match = /^(\d{6}) (\d+)$/.exec(line.slice(prefix.length).trim());
  if (!match) return null;
  const [, digits = "", size = ""] = match;
  return { name: `part-${digits}`, index: Number(digits), size: Number(size) };
}

/** Passes a stream through, counting its bytes. */
export function countingStream(stream: ReadableStream<Uint8Array>): {
  readonly stream: ReadableStream<Uint8Array>;
  bytes(): number;
} {
  let bytes = 0;
  const counted = stream.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        bytes += chunk.byteLength;
        controller.enqueue(chunk);
      },
    }),
  );
  return { stream: counted, bytes: () => bytes };
}
