import { SandboxFailedError } from "@open-managed-agents/runtime-resource-contract";
import { createBridgeFiles } from "../runtime/files.js";
import type { BridgeClient } from "../wire/bridge-client.js";
import { type AnnouncedPart, countingStream, readAnnouncedParts } from "./part-announcements.js";
import type { Spool } from "./spool.js";

/** Bytes of finished parts the sandbox may hold before its archiving waits for the driver. */
const PARTS_ON_DISK_BYTES = 64 * 1024 * 1024;

/**
 * Finished parts the sandbox holds at most: 64 MiB of them, at least 4 and at most 16. Fetched parts are removed
 * by an exec each batch, and fewer of them leave more of the sandbox's CPU to the archiving.
 */
export function partsOnDisk(partBytes: number): number {
  return Math.min(16, Math.max(4, Math.floor(PARTS_ON_DISK_BYTES / partBytes)));
}

/** Options of {@link fetchArchiveInParts}. */
export interface ArchiveInPartsOptions {
  readonly client: BridgeClient;
  readonly sandboxId: string;
  readonly partBytes: number;
  readonly maxRequestBytes: number;
  /**
   * The shell pipeline writing the bytes to send to stdout, given the scratch folder (excluded from it). Stages
   * before the last one may record their exit status in `<folder>/<name>-status`; all must be 0 or 1.
   */
  readonly command: (directory: string, directoryName: string) => string;
  /**
   * A shell command run in the same call that makes the scratch folder (asking after the sandbox's tools costs
   * no call of its own); its output goes to `prepare`. Optional.
   */
  readonly probe?: string;
  /** Runs in the scratch folder before the command (to place a file list there), given the probe's output; optional. */
  readonly prepare?: (directory: string, probed: string) => Promise<void>;
  /** Receives the parts in order: a spool, or a sink read while parts still arrive. */
  readonly spool: Pick<Spool, "append"> & { finish(): Promise<{ readonly size: number }> };
  readonly signal?: AbortSignal;
}

/**
 * Has the sandbox run `command` into parts of `partBytes` in a scratch folder under `/workspace` and fetches
 * each part with a file GET into `spool` as soon as it is complete, while the sandbox still writes the next
 * ones: `split --filter` writes a part under a temporary name, renames it once whole and announces it with its
 * size on the exec's output. A fetched part is deleted, and the filter waits while {@link partsOnDisk} finished
 * parts are still there, so the sandbox's disk holds a few parts at most. The folder is removed whatever happens.
 */
export async function fetchArchiveInParts(options: ArchiveInPartsOptions): Promise<void> {
  const { client, sandboxId, spool } = options;
  const files = createBridgeFiles(client, sandboxId, { maxRequestBytes: options.maxRequestBytes });
  const directoryName = `.oma-checkpoint-${crypto.randomUUID()}`;
  const directory = `/workspace/${directoryName}`;
  const maxParts = partsOnDisk(options.partBytes);
  // Stops the sandbox's command when fetching fails, and fetching when the command fails.
  const stop = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, stop.signal]) : stop.signal;
  // Fetched parts are removed in batches of half the bound: the filter then never waits long, and a transfer that
  // stays under the bound sends no removal at all (the folder's removal takes them).
  const removals = createPartRemover(files, directory, Math.max(1, Math.floor(maxParts / 2)));
  try {
    const probed = await files.run(
      options.probe === undefined
        ? `mkdir -p ${directory}`
        : `mkdir -p ${directory} && { ${options.probe}; }`,
      signal,
    );
    await options.prepare?.(directory, probed);
    const pattern = `${directory}/part-[0-9][0-9][0-9][0-9][0-9][0-9]`;
    const filter = [
      `while set -- ${pattern}; [ -e "$1" ] && [ $# -ge ${maxParts} ]; do sleep 0.05; done`,
      `cat > "$FILE.partial" && mv "$FILE.partial" "$FILE" && stat -c "%n %s" "$FILE"`,
    ].join("; ");
    // tar exits 1 when files change while read; that is still a consistent-enough snapshot of a live tree.
    const script = [
      `{ ${options.command(directory, directoryName)}; echo $? > ${directory}/status; } | split -b ${options.partBytes} -a 6 -d --filter='${filter}' - ${directory}/part-`,
      // Every stage that records a status (the producer, and a compressor behind it) must have succeeded.
      `for file in ${directory}/*status; do status=$(cat "$file"); [ "$status" -le 1 ] || { echo "archiving failed: $status" >&2; exit 1; }; done`,
    ].join(" && ");
    const announced = readAnnouncedParts(client, sandboxId, script, `${directory}/part-`, signal);
    let index = 0;
    let received = 0;
    try {
      for await (const part of announced) {
        if (part.index !== index)
          throw new SandboxFailedError({
            message: "archive parts were announced out of order",
            context: { expected: index, announced: part.index },
          });
        received += await fetchPart(part);
        removals.fetched(part.name);
        index += 1;
      }
    } catch (error) {
      stop.abort(error);
      throw error;
    }
    if (index === 0)
      throw new SandboxFailedError({ message: "archiving the workspace produced no parts" });
    const { size } = await spool.finish();
    if (size !== received)
      throw new SandboxFailedError({
        message: `archive parts arrived with ${size} of ${received} bytes`,
        context: { expected: received, received: size },
      });
  } finally {
    await removals.settled();
    await files.run(removeWhileWritten(directory)).catch(() => undefined);
  }

  /** One GET; a part that reads short or long (a real bridge answers a missing file with an empty 200) fails. */
  async function fetchPart(part: AnnouncedPart): Promise<number> {
    const counted = countingStream(
      await client.readFile(sandboxId, `${directory}/${part.name}`, signal),
    );
    await spool.append(counted.stream, signal);
    if (counted.bytes() !== part.size) {
      throw new SandboxFailedError({
        message: `archive part ${part.name} arrived with ${counted.bytes()} of ${part.size} bytes`,
        context: { expected: part.size, received: counted.bytes() },
      });
    }
    return part.size;
  }
}

/**
 * Removes the scratch folder even while a refused transfer's filter still writes a part into it (a single
 * `rm -rf` then fails on a folder that is no longer empty): once the folder is gone, the filter's next part
 * fails, `split` exits and the archiving behind it ends on a broken pipe. Bounded at 5 s of retries.
 */
export function removeWhileWritten(directory: string): string {
  return `i=0; while [ -e ${directory} ] && [ $i -lt 100 ]; do rm -rf ${directory} 2>/dev/null || sleep 0.05; i=$((i+1)); done; [ ! -e ${directory} ]`;
}

/**
 * Deletes fetched parts without holding up the next GET: once `batch` fetched parts wait, one `rm` covers them
 * (and any fetched while it runs). A failed removal only leaves the filter waiting on a part the folder's
 * removal takes with it.
 */
function createPartRemover(
  files: ReturnType<typeof createBridgeFiles>,
  directory: string,
  batch: number,
) {
  let pending: string[] = [];
  let running: Promise<void> = Promise.resolve();
  let active = false;
  const drain = async (): Promise<void> => {
    active = true;
    while (pending.length >= batch) {
      const names = pending;
      pending = [];
      await files.run(`cd ${directory} && rm -f ${names.join(" ")}`).catch(() => undefined);
    }
    active = false;
  };
  return {
    fetched(name: string) {
      pending.push(name);
      if (!active && pending.length >= batch) running = drain();
    },
    settled: () => running,
  };
}
