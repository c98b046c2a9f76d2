import * as z from "zod";
import type { BlobStore } from "@open-managed-agents/blob-store";
import {
  IntegrityError,
  LimitExceededError,
  NotFoundError,
  type RuntimePublicationCandidate,
  type SessionOutputEntryCandidate,
  nonEmptyString,
  parseRecord,
  sessionOutputEntryCandidateSchema,
} from "@open-managed-agents/runtime-resource-contract";
import { sha256Hex, sha256HexOf, stableJson } from "../digest.js";

/** Candidate metadata key holding the manifest's blob key. */
export const OUTPUT_MANIFEST_KEY_METADATA_KEY = "oma.outputs.manifest_key";
/** Candidate metadata key holding the manifest's entry count. */
export const OUTPUT_ENTRIES_METADATA_KEY = "oma.outputs.entries";

/** Largest manifest {@link readOutputManifest} reads: 64 MiB. */
export const MAX_OUTPUT_MANIFEST_BYTES = 64 * 1024 ** 2;

/** Length of the hash prefix in an output candidate id (`out_<prefix>`). */
const CANDIDATE_ID_HEX = 32;

/** The stored manifest of one work item's outputs. Entries are sorted by `logicalPath`. */
export interface SessionOutputManifest {
  readonly version: 1;
  readonly sessionId: string;
  readonly workId: string;
  /** Fence generation that collected the outputs. */
  readonly generation: number;
  readonly entries: readonly SessionOutputEntryCandidate[];
}

/** Schema for {@link SessionOutputManifest}. */
export const sessionOutputManifestSchema = z.object({
  version: z.literal(1),
  sessionId: nonEmptyString,
  workId: nonEmptyString,
  generation: z.number().int().nonnegative(),
  entries: z.array(sessionOutputEntryCandidateSchema),
});

/** A manifest's stable JSON bytes and their sha256. */
export interface EncodedOutputManifest {
  readonly bytes: Uint8Array;
  readonly hex: string;
}

/** Encodes a manifest as stable JSON. */
export function encodeOutputManifest(manifest: SessionOutputManifest): EncodedOutputManifest {
  const bytes = new TextEncoder().encode(stableJson(manifest));
  return { bytes, hex: sha256Hex(bytes) };
}

/** The id of the output candidate whose manifest hashes to `hex`. */
export function outputCandidateId(hex: string): string {
  return `out_${hex.slice(0, CANDIDATE_ID_HEX)}`;
}

/**
 * Reads and verifies the manifest an output candidate names: the key must be the content-addressed key
 * of the candidate's hash, the stored bytes must hash to it, and the entry count must match. Throws
 * `integrity_failed` for any mismatch, `not_found` when the manifest is missing.
 */
export async function readOutputManifest(
  store: BlobStore,
  candidate: RuntimePublicationCandidate,
): Promise<SessionOutputManifest> {
  const hex = sha256HexOf(candidate.contentHash);
  const key = candidate.metadata?.[OUTPUT_MANIFEST_KEY_METADATA_KEY];
  const context = { id: candidate.id };
  if (hex === null || candidate.id !== outputCandidateId(hex)) {
    throw new IntegrityError({
      message: `output candidate ${candidate.id} does not match its content hash`,
      context,
    });
  }
  if (typeof key !== "string" || !key.endsWith(`/manifests/${hex}.json`)) {
    throw new IntegrityError({
      message: `output candidate ${candidate.id} names no manifest key for its hash`,
      context,
    });
  }
  const object = await store.get(key);
  if (!object)
    throw new NotFoundError({
      message: `output manifest ${key} does not exist`,
      context: { ...context, key },
    });
  if (object.size > MAX_OUTPUT_MANIFEST_BYTES) {
    await object
      .stream()
      .cancel()
      .catch(() => undefined);
    throw new LimitExceededError({
      message: `output manifest ${key} is larger than ${MAX_OUTPUT_MANIFEST_BYTES} bytes`,
      context: { key, size: object.size },
    });
  }
  const bytes = await object.bytes();
  if (sha256Hex(bytes) !== hex)
    throw new IntegrityError({
      message: `output manifest ${key} does not match its content hash`,
      context: { key },
    });
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (error) {
    throw new IntegrityError({
      message: `output manifest ${key} is not JSON`,
      context: { key },
      cause: error,
    });
  }
  const manifest = parseRecord(sessionOutputManifestSchema, json, {
    record: "output manifest",
    code: "integrity_failed",
  });
  const expectedEntries = candidate.metadata?.[OUTPUT_ENTRIES_METADATA_KEY];
  if (typeof expectedEntries === "number" && expectedEntries !== manifest.entries.length) {
    throw new IntegrityError({
      message: `output manifest ${key} has ${manifest.entries.length} entries, the candidate promised ${expectedEntries}`,
      context: { key },
    });
  }
  return manifest;
}
