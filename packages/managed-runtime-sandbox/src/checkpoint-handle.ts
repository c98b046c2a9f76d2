import {
  IntegrityError,
  ProviderMismatchError,
  type SandboxCheckpointHandle,
  type SandboxCheckpointScope,
  type ScalarMetadata,
  parseSandboxCheckpointHandle,
} from "@open-managed-agents/runtime-resource-contract";
import { sha256Hex, stableJson } from "./digest.js";

/** Metadata key holding a checkpoint handle's stable JSON (candidates, bindings, suspended leases). */
export const CHECKPOINT_METADATA_KEY = "oma.checkpoint.v1";
/** Metadata key holding `sha256:<hex>` of {@link CHECKPOINT_METADATA_KEY}'s value on bindings and leases. */
export const CHECKPOINT_HASH_METADATA_KEY = "oma.checkpoint.sha256";

/** A handle with its stable JSON and that JSON's hash. */
export interface EncodedCheckpointHandle {
  readonly handle: SandboxCheckpointHandle;
  readonly json: string;
  /** `sha256:<hex>` of `json`. */
  readonly contentHash: string;
}

/** What a decoded handle must satisfy. */
export interface CheckpointHandleExpectation {
  readonly provider: string;
  readonly scope: SandboxCheckpointScope;
  /** Where the handle came from, for error messages. */
  readonly source: string;
}

/** Encodes a handle the provider returned, after checking its provider and scope. */
export function encodeCheckpointHandle(
  handle: unknown,
  expectation: CheckpointHandleExpectation,
): EncodedCheckpointHandle {
  const parsed = parseSandboxCheckpointHandle(handle, { code: "upstream_protocol" });
  checkHandle(parsed, expectation);
  const json = stableJson(parsed);
  return { handle: parsed, json, contentHash: `sha256:${sha256Hex(json)}` };
}

/**
 * Decodes a stored handle. Verifies, in order: the JSON hashes to `contentHash`, it parses as a handle,
 * it is in stable form, then its provider and scope. Throws `integrity_failed` for the first three and
 * `provider_mismatch` for the last two, before anything reaches a sandbox.
 */
export function decodeCheckpointHandle(
  json: unknown,
  contentHash: unknown,
  expectation: CheckpointHandleExpectation,
): EncodedCheckpointHandle {
  const context = { source: expectation.source };
  if (typeof json !== "string" || json === "") {
    throw new IntegrityError({
      message: `${expectation.source} carries no ${CHECKPOINT_METADATA_KEY} checkpoint handle`,
      context,
    });
  }
  const actualHash = `sha256:${sha256Hex(json)}`;
  if (actualHash !== contentHash) {
    throw new IntegrityError({
      message: `${expectation.source} checkpoint handle does not match its content hash`,
      context,
    });
  }
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    throw new IntegrityError({
      message: `${expectation.source} checkpoint handle is not JSON`,
      context,
      cause: error,
    });
  }
  const handle = parseSandboxCheckpointHandle(value, { code: "integrity_failed" });
  if (stableJson(handle) !== json) {
    throw new IntegrityError({
      message: `${expectation.source} checkpoint handle is not in stable form`,
      context,
    });
  }
  checkHandle(handle, expectation);
  return { handle, json, contentHash: actualHash };
}

/** Metadata entries that carry an encoded handle on a binding or a lease. */
export function checkpointMetadata(encoded: EncodedCheckpointHandle): ScalarMetadata {
  return {
    [CHECKPOINT_METADATA_KEY]: encoded.json,
    [CHECKPOINT_HASH_METADATA_KEY]: encoded.contentHash,
  };
}

/** Decodes the handle carried by binding or lease metadata, or null when there is none. */
export function decodeCheckpointMetadata(
  metadata: ScalarMetadata | undefined,
  expectation: CheckpointHandleExpectation,
): EncodedCheckpointHandle | null {
  if (metadata?.[CHECKPOINT_METADATA_KEY] === undefined) return null;
  return decodeCheckpointHandle(
    metadata[CHECKPOINT_METADATA_KEY],
    metadata[CHECKPOINT_HASH_METADATA_KEY],
    expectation,
  );
}

function checkHandle(
  handle: SandboxCheckpointHandle,
  expectation: CheckpointHandleExpectation,
): void {
  if (handle.provider !== expectation.provider) {
    throw new ProviderMismatchError({
      message: `${expectation.source} checkpoint handle belongs to provider "${handle.provider}", not "${expectation.provider}"`,
      context: { expected: expectation.provider, actual: handle.provider },
    });
  }
  if (handle.scope !== expectation.scope) {
    throw new ProviderMismatchError({
      message: `${expectation.source} checkpoint handle has scope "${handle.scope}"; this strategy needs "${expectation.scope}"`,
      context: { expected: expectation.scope, actual: handle.scope },
    });
  }
}
