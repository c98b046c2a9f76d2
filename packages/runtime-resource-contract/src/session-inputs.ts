import type { RuntimeResourceFence, RuntimePublicationCandidate } from "./fence.js";
import type { ManagedSandboxLease } from "./sandbox.js";
import type { Abortable, RuntimeResourceScope } from "./scope.js";
import type { WorkspaceBinding } from "./workspace.js";

/** An opaque session resource, discriminated by `type` (`memory_store`, `github_repository`, `file`, …). */
export interface RuntimeSessionResource {
  readonly type: string;
  readonly [key: string]: unknown;
}

/** The session as the host sees it when running a work item. */
export interface RuntimeSessionSnapshot {
  readonly id: string;
  readonly environmentId: string;
  readonly metadata: Readonly<Record<string, string>>;
  readonly resources: readonly RuntimeSessionResource[];
}

/** A memory document as stored by the control plane. */
export interface SessionMemoryDocument {
  readonly path: string;
  readonly content: string;
  readonly contentSha256: string;
}

/** Result of a guarded memory write. */
export type SessionMemoryWriteResult =
  | { readonly type: "applied" }
  | { readonly type: "conflict" }
  | { readonly type: "not_found" };

/** Read/write access to a session memory store. */
export interface SessionMemoryAccessPort {
  list(input: Abortable & { readonly storeId: string }): Promise<readonly SessionMemoryDocument[]>;
  create(
    input: Abortable & {
      readonly storeId: string;
      readonly path: string;
      readonly content: string;
    },
  ): Promise<SessionMemoryWriteResult>;
  update(
    input: Abortable & {
      readonly storeId: string;
      readonly path: string;
      readonly content: string;
      readonly expectedContentSha256: string;
    },
  ): Promise<SessionMemoryWriteResult>;
  delete(
    input: Abortable & {
      readonly storeId: string;
      readonly path: string;
      readonly expectedContentSha256: string;
    },
  ): Promise<SessionMemoryWriteResult>;
}

/** Control-plane access the materializer uses. */
export interface SessionInputAccessPort {
  downloadFile(input: Abortable & { readonly fileId: string }): Promise<ReadableStream<Uint8Array>>;
  readonly memories?: SessionMemoryAccessPort;
}

/** Context shared by materialize and synchronize. */
export interface SessionInputLifecycleContext extends Abortable {
  readonly scope: RuntimeResourceScope;
  readonly fence: RuntimeResourceFence;
  readonly session: RuntimeSessionSnapshot;
  readonly sandbox: ManagedSandboxLease;
  /** Who owns memory stores: the AMA worker, or this materializer (supervised lane). */
  readonly resourceOwnership: { readonly memoryStore: "worker" | "materializer" };
  readonly access?: SessionInputAccessPort;
  /** Resolves false once the fence is no longer current; the materializer must then stop writing. */
  authorize(): Promise<boolean>;
}

/** Puts session resources (files, repositories, memory) into the sandbox and syncs them back. */
export interface SessionInputMaterializerPort {
  /** Called once after attach, before the harness starts. */
  materialize(
    input: SessionInputLifecycleContext & {
      readonly workspace: WorkspaceBinding;
      readonly activeWorkspaceCheckpoint: RuntimePublicationCandidate | null;
      readonly idempotencyKey: string;
    },
  ): Promise<void>;
  /** Writes changes back; called periodically, at each checkpoint and once at the end. */
  synchronize(
    input: SessionInputLifecycleContext & { readonly idempotencyKey: string },
  ): Promise<void>;
}
