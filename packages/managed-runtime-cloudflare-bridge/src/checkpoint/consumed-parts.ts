import type { Readable } from "node:stream";
import {
  ManagedRuntimeError,
  SandboxFailedError,
} from "@open-managed-agents/runtime-resource-contract";
import { type ArchiveInPartsOptions, fetchArchiveInParts } from "./sandbox-parts.js";
import { createStreamSink } from "./stream-sink.js";

/** Options of {@link fetchConsumedParts}: those of {@link fetchArchiveInParts} without its spool. */
export interface ConsumedPartsOptions<T> extends Omit<ArchiveInPartsOptions, "spool"> {
  /** Bytes the transfer may carry in all. */
  readonly maxBytes: number;
  /** Reads the transferred bytes as they arrive; started once `prepare` is done, so it may use what it chose. */
  readonly consume: (readable: Readable) => Promise<T>;
}

const asError = (reason: unknown): Error =>
  reason instanceof Error ? reason : new Error(String(reason));

/**
 * Fetches an archive in parts into a reader that runs alongside the transfer, so receiving and storing
 * overlap and nothing is spooled to disk. A reader that fails stops the transfer; when both fail, the
 * reader's own typed refusal (a limit, a content that did not match) says more than the fetch it stopped.
 */
export async function fetchConsumedParts<T>(options: ConsumedPartsOptions<T>): Promise<T> {
  const { maxBytes, consume, prepare, ...transfer } = options;
  const sink = createStreamSink({ maxBytes });
  let consumed: Promise<T> | null = null;
  try {
    await fetchArchiveInParts({
      ...transfer,
      spool: sink,
      prepare: async (directory, probed) => {
        await prepare?.(directory, probed);
        const started = consume(sink.readable);
        started.catch((error: unknown) => sink.destroy(asError(error)));
        consumed = started;
      },
    });
  } catch (error) {
    sink.destroy(asError(error));
    const refused = await (consumed as Promise<T> | null)?.then(
      () => null,
      (reason: unknown) => reason,
    );
    throw ManagedRuntimeError.isInstance(refused) ? refused : error;
  }
  if (!consumed)
    throw new SandboxFailedError({ message: "archiving the workspace produced no parts" });
  return await (consumed as Promise<T>);
}
