import * as z from "zod";
import { type ScalarMetadata, nonEmptyString, scalarMetadataSchema } from "./json.js";
import type { OutputStrategy, SessionOutputCapabilities } from "./capabilities.js";
import type { RuntimeResourceFence } from "./fence.js";
import type { ManagedSandboxLease } from "./sandbox.js";
import type { Abortable, RuntimeResourceScope } from "./scope.js";

/** The only mount path of session outputs. */
export const OUTPUTS_MOUNT_PATH = "/mnt/session/outputs";

/** Prepared session output storage. */
export interface SessionOutputBinding {
  readonly bindingId: string;
  readonly mountPath: typeof OUTPUTS_MOUNT_PATH;
  readonly metadata?: ScalarMetadata;
}

/** One collected output file. */
export interface SessionOutputEntryCandidate {
  /** Path relative to `/mnt/session/outputs`, `/`-separated, valid UTF-8. */
  readonly logicalPath: string;
  /** `sha256:<hex>` of the content. */
  readonly contentHash: string;
  readonly size: number;
  readonly mediaType?: string;
}

/** A stored, content-addressed manifest of a work item's outputs. */
export interface SessionOutputManifestCandidate {
  readonly id: string;
  readonly contentHash: string;
  /** Number of entries in the manifest. */
  readonly entries: number;
  readonly metadata?: ScalarMetadata;
}

/** What {@link SessionOutputPort.attach} and {@link SessionOutputPort.collect} act on: a prepared binding in one sandbox. */
export type SessionOutputSandboxInput = Abortable & {
  readonly scope: RuntimeResourceScope;
  readonly fence: RuntimeResourceFence;
  readonly strategy: OutputStrategy;
  readonly binding: SessionOutputBinding;
  readonly sandbox: ManagedSandboxLease;
};

/** Session outputs at `/mnt/session/outputs`. */
export interface SessionOutputPort {
  capabilities(scope: RuntimeResourceScope): Promise<SessionOutputCapabilities>;
  /** Prepares storage before the sandbox exists. */
  prepare(
    input: Abortable & {
      readonly scope: RuntimeResourceScope;
      readonly fence: RuntimeResourceFence;
      readonly strategy: OutputStrategy;
      readonly idempotencyKey: string;
    },
  ): Promise<SessionOutputBinding>;
  /** Makes the outputs directory exist (or mounted) inside the sandbox. */
  attach(input: SessionOutputSandboxInput): Promise<void>;
  /** Lists and hashes every output file. Throws `limit_exceeded` past the file or byte limits, `invalid_request` for non-UTF-8 names. */
  collect(input: SessionOutputSandboxInput): Promise<readonly SessionOutputEntryCandidate[]>;
  /** Stores the entries and their manifest durably. Idempotent per key; content is re-verified while stored. */
  finalize(
    input: Abortable & {
      readonly scope: RuntimeResourceScope;
      readonly fence: RuntimeResourceFence;
      readonly binding: SessionOutputBinding;
      readonly sandbox: ManagedSandboxLease;
      readonly entries: readonly SessionOutputEntryCandidate[];
      readonly idempotencyKey: string;
    },
  ): Promise<SessionOutputManifestCandidate>;
  /** Frees the binding after a successful publish. Idempotent. */
  release(input: {
    readonly scope: RuntimeResourceScope;
    readonly fence: RuntimeResourceFence;
    readonly binding: SessionOutputBinding;
  }): Promise<void>;
  /** Discards unpublished work after a failure or lost lease. Idempotent. */
  abort(input: {
    readonly scope: RuntimeResourceScope;
    readonly fence: RuntimeResourceFence;
    readonly binding: SessionOutputBinding;
    readonly reason: "failed" | "lease_lost";
  }): Promise<void>;
}

export const sessionOutputEntryCandidateSchema = z.object({
  logicalPath: nonEmptyString,
  contentHash: nonEmptyString,
  size: z.number().int().nonnegative(),
  mediaType: z.string().optional(),
});

export const sessionOutputManifestCandidateSchema = z.object({
  id: nonEmptyString,
  contentHash: nonEmptyString,
  entries: z.number().int().nonnegative(),
  metadata: scalarMetadataSchema.optional(),
});
