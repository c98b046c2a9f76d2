import {
  ManagedRuntimeError,
  NotFoundError,
  SandboxFailedError,
} from "@open-managed-agents/runtime-resource-contract";
import type { SnapshotSandbox } from "./sandbox-port.js";
import { type TemporaryFile, createTemporaryFile } from "./temporary-file.js";

/** Parts read from the sandbox at once: each waits in a spool of its own until its turn. */
export const PARTS_IN_FLIGHT = 3;

export interface PartReaderOptions {
  readonly sandbox: SnapshotSandbox;
  /** Part `i` is `${prefix}` followed by `i` in six digits, as split(1) -d -a 6 names it. */
  readonly prefix: string;
  readonly parts: number;
  readonly partBytes: number;
  /** Bytes of the last part; every other part holds `partBytes`. */
  readonly lastBytes: number;
  readonly spoolDirectory: string;
  readonly signal?: AbortSignal;
}

const cause = (error: unknown) => String(error).slice(0, 300);

/**
 * The bytes of the sandbox's parts, in order, while up to PARTS_IN_FLIGHT parts are downloaded ahead into
 * nameless spools (never held in memory). A part that is missing or of another size than the sandbox reported
 * is a SandboxFailedError naming it; a typed failure of the transport keeps its own type. `close` stops every
 * read in flight and closes every spool; the bytes' generator does too once it ends, fails or is returned.
 */
export function createPartReader(options: PartReaderOptions) {
  const { sandbox, prefix, parts, partBytes, lastBytes, spoolDirectory } = options;
  const stop = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, stop.signal]) : stop.signal;
  const started: Promise<TemporaryFile>[] = [];
  const spools = new Set<TemporaryFile>();
  let failure: unknown;

  const fetchPart = async (index: number): Promise<TemporaryFile> => {
    const name = `${prefix}${String(index).padStart(6, "0")}`;
    const expected = index === parts - 1 ? lastBytes : partBytes;
    const spool = await createTemporaryFile(spoolDirectory);
    spools.add(spool);
    try {
      for await (const chunk of sandbox.readFile(name, signal)) await spool.append(chunk);
      if (spool.size !== expected)
        throw new SandboxFailedError({
          message: `part ${index} of the sandbox's archive holds ${spool.size} bytes, not ${expected}`,
          context: { part: name.slice(-256) },
        });
      return spool;
    } catch (error) {
      await spool.close();
      spools.delete(spool);
      if (signal.aborted) throw options.signal?.aborted ? options.signal.reason : error;
      // A typed failure (the bridge gone, a timeout) keeps its code; a part not there is the sandbox's fault.
      failure ??=
        error instanceof ManagedRuntimeError && !(error instanceof NotFoundError)
          ? error
          : new SandboxFailedError({
              message: `reading part ${index} of the sandbox's archive failed: ${cause(error)}`,
              context: { part: name.slice(-256) },
            });
      // One failed part ends the read: the others stop downloading.
      stop.abort(failure);
      throw failure;
    }
  };
  const start = (index: number) => {
    if (index >= parts || index < started.length) return;
    const fetching = fetchPart(index);
    // Awaited in turn, or by close: a part failing while an earlier one is read is no unhandled rejection.
    fetching.catch(() => undefined);
    started.push(fetching);
  };

  const close = async () => {
    stop.abort();
    await Promise.allSettled(started);
    await Promise.all([...spools].map((spool) => spool.close()));
    spools.clear();
  };

  async function* bytes(): AsyncGenerator<Uint8Array> {
    try {
      for (let index = 0; index < parts; index += 1) {
        for (let ahead = index; ahead < index + PARTS_IN_FLIGHT; ahead += 1) start(ahead);
        const spool = await (started[index] as Promise<TemporaryFile>).catch((error: unknown) => {
          throw failure ?? error;
        });
        // Fresh pieces: the decoder may hold one while it asks for the next.
        for await (const piece of spool.read()) yield piece;
        await spool.close();
        spools.delete(spool);
      }
    } finally {
      await close();
    }
  }
  return { bytes: bytes(), close };
}
