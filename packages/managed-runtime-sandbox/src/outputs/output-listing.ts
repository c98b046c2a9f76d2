import {
  InvalidRequestError,
  OUTPUTS_MOUNT_PATH,
  SandboxFailedError,
  UpstreamProtocolError,
} from "@open-managed-agents/runtime-resource-contract";
import type { SandboxDuplexProcessPort } from "@open-managed-agents/sandbox";
import { throwIfAborted } from "../abort.js";
import { closeStdin, onAbort } from "../process-control.js";
import { createByteTail, drainStream } from "../process-output.js";
import { providerFailure } from "../runtime-registry.js";
import { maxFilesExceeded } from "./output-limits.js";

/** Longest file name (bytes, relative to the outputs directory) the listing accepts. */
export const MAX_OUTPUT_PATH_BYTES = 4_096;

/** Options of {@link listOutputFiles}. */
export interface ListOutputFilesOptions {
  readonly maxFiles: number;
  readonly signal: AbortSignal;
}

/**
 * The listing command. It changes into the outputs directory itself rather than asking for it as the
 * working directory, since some providers only accept working directories under `/workspace`.
 */
export const OUTPUT_LISTING_SCRIPT = `cd ${OUTPUTS_MOUNT_PATH} && exec find . -type f -print0`;

/**
 * Lists regular files under `/mnt/session/outputs` as paths relative to it, with
 * `find . -type f -print0` run in that directory (symlinks are not followed). Names are read as bytes:
 * a name that is not valid UTF-8 throws `invalid_request`, more than `maxFiles` names throws
 * `limit_exceeded` and stops the listing.
 */
export async function listOutputFiles(
  runtime: SandboxDuplexProcessPort,
  options: ListOutputFilesOptions,
): Promise<string[]> {
  throwIfAborted(options.signal, "output listing");
  let process;
  try {
    process = await runtime.spawnDuplexProcess({
      command: "sh",
      args: ["-c", OUTPUT_LISTING_SCRIPT],
    });
  } catch (error) {
    throw providerFailure(error, "listing session outputs failed");
  }
  await closeStdin(process);
  const names: string[] = [];
  const splitter = createNameSplitter((bytes) => {
    names.push(toLogicalPath(bytes, names.length));
    if (names.length > options.maxFiles) throw maxFilesExceeded(options.maxFiles);
  });
  const stderr = createByteTail();
  const detach = onAbort(options.signal, () => process.kill("SIGKILL"));
  // stderr only feeds the error message; its own failure must not mask the listing's outcome.
  const stderrDone = drainStream(process.stderr, (chunk) => stderr.push(chunk)).catch(
    () => undefined,
  );
  try {
    await drainStream(process.stdout, splitter.push);
  } catch (error) {
    process.kill("SIGKILL");
    throw error;
  } finally {
    detach();
  }
  await stderrDone;
  const exit = await process.exited;
  throwIfAborted(options.signal, "output listing");
  if (exit.code !== 0) {
    throw new SandboxFailedError({
      message: `listing session outputs failed (exit ${exit.code ?? exit.signal}): ${stderr.text() || "(no stderr)"}`,
      context: { exitCode: exit.code, signal: exit.signal },
    });
  }
  if (splitter.pendingBytes() > 0)
    throw new UpstreamProtocolError({ message: "output listing ended inside a file name" });
  return names;
}

/** Splits a NUL-separated byte stream into names, holding at most one unfinished name. */
function createNameSplitter(onName: (bytes: Uint8Array) => void) {
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  const take = (tail: Uint8Array): Uint8Array => {
    const name = new Uint8Array(pendingBytes + tail.byteLength);
    let offset = 0;
    for (const part of [...pending, tail]) {
      name.set(part, offset);
      offset += part.byteLength;
    }
    pending = [];
    pendingBytes = 0;
    return name;
  };
  return {
    push(chunk: Uint8Array) {
      let start = 0;
      for (let index = chunk.indexOf(0); index !== -1; index = chunk.indexOf(0, start)) {
        onName(take(chunk.subarray(start, index)));
        start = index + 1;
      }
      if (start < chunk.byteLength) {
        pending.push(chunk.slice(start));
        pendingBytes += chunk.byteLength - start;
        if (pendingBytes - 2 > MAX_OUTPUT_PATH_BYTES) {
          throw new InvalidRequestError({
            message: `an output file name is longer than ${MAX_OUTPUT_PATH_BYTES} bytes`,
          });
        }
      }
    },
    pendingBytes: () => pendingBytes,
  };
}

function toLogicalPath(bytes: Uint8Array, index: number): string {
  // Names arrive as "./<path>"; the two-byte prefix does not count against the limit.
  if (bytes.byteLength - 2 > MAX_OUTPUT_PATH_BYTES) {
    throw new InvalidRequestError({
      message: `an output file name is longer than ${MAX_OUTPUT_PATH_BYTES} bytes`,
      context: { index },
    });
  }
  let name: string;
  try {
    name = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch (error) {
    throw new InvalidRequestError({
      message: `output file name is not valid UTF-8: ${new TextDecoder().decode(bytes)}`,
      context: { index },
      cause: error,
    });
  }
  if (!name.startsWith("./") || outputPathProblem(name.slice(2))) {
    throw new UpstreamProtocolError({
      message: "output listing returned a name outside the outputs directory",
      context: { index },
    });
  }
  return name.slice(2);
}

/** Why `logicalPath` is not a safe path relative to the outputs directory, or null when it is. */
export function outputPathProblem(logicalPath: string): string | null {
  if (logicalPath === "" || logicalPath.startsWith("/")) return "must be a non-empty relative path";
  if (logicalPath.includes("\0")) return "must not contain NUL";
  if (
    logicalPath.split("/").some((segment) => segment === "" || segment === "." || segment === "..")
  ) {
    return "must not contain an empty, . or .. segment";
  }
  return null;
}
