import type { BlobStore } from "@open-managed-agents/blob-store";
import { IntegrityError } from "@open-managed-agents/runtime-resource-contract";
import { type ContentDigest, digestStream, verifyingStream } from "../digest.js";

/** Input of {@link putVerified}. */
export interface VerifiedPutInput {
  readonly store: BlobStore;
  /** Content-addressed key: the content it names is `expected`. */
  readonly key: string;
  readonly expected: ContentDigest;
  readonly contentType: string;
  /** Opens the source afresh; called once, or twice when the key already exists. */
  readonly open: () => Promise<ReadableStream<Uint8Array>>;
  /** Names the source in errors. */
  readonly label: string;
  readonly signal: AbortSignal;
}

/**
 * Stores content under its content-addressed key with `ifNoneMatch: "*"`. The source is re-verified
 * while it streams into the store: a body that differs from `expected` errors before it ends, so the
 * store commits nothing. An object already at the key is read back and verified (size and sha256); a
 * mismatch is a storage collision and throws `integrity_failed`.
 */
export async function putVerified(input: VerifiedPutInput): Promise<"stored" | "existing"> {
  if (await input.store.head(input.key)) {
    await verifyExisting(input);
    return "existing";
  }
  const body = verifyingStream(
    await input.open(),
    input.expected,
    (actual) => sourceChanged(input, actual),
    input.signal,
  );
  const info = await input.store.put(input.key, body.stream, {
    ifNoneMatch: "*",
    contentType: input.contentType,
    contentLength: input.expected.size,
  });
  if (info === null) {
    // Another writer won the race; the body may be unread, so verify both sides explicitly.
    await body.stream.cancel().catch(() => undefined);
    await verifyExisting(input, body.verified());
    return "existing";
  }
  if (!body.verified() || info.size !== input.expected.size) {
    await input.store.delete(input.key);
    throw new IntegrityError({
      message: `blob store accepted ${input.label} without reading all of it`,
      context: { key: input.key, expectedSize: input.expected.size, storedSize: info.size },
    });
  }
  return "stored";
}

async function verifyExisting(input: VerifiedPutInput, sourceVerified = false): Promise<void> {
  const existing = await input.store.get(input.key);
  if (!existing)
    throw new IntegrityError({
      message: `${input.key} vanished while ${input.label} was stored`,
      context: { key: input.key },
    });
  if (existing.size !== input.expected.size) {
    await existing
      .stream()
      .cancel()
      .catch(() => undefined);
    throw collision(input, existing.size);
  }
  const stored = await digestStream(existing.stream(), { signal: input.signal });
  if (stored.size !== input.expected.size || stored.hex !== input.expected.hex)
    throw collision(input, stored.size);
  if (sourceVerified) return;
  const source = await digestStream(await input.open(), { signal: input.signal });
  if (source.size !== input.expected.size || source.hex !== input.expected.hex)
    throw sourceChanged(input, source);
}

function collision(input: VerifiedPutInput, storedSize: number): IntegrityError {
  return new IntegrityError({
    message: `storage collision: the object at ${input.key} does not match ${input.label}`,
    context: { key: input.key, expectedSize: input.expected.size, storedSize },
  });
}

function sourceChanged(input: VerifiedPutInput, actual: Partial<ContentDigest>): IntegrityError {
  return new IntegrityError({
    message: `${input.label} changed after it was collected`,
    context: {
      key: input.key,
      expectedSize: input.expected.size,
      ...(actual.size === undefined ? {} : { actualSize: actual.size }),
    },
  });
}
