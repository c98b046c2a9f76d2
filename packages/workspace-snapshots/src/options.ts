import type { BlobStore } from "@open-managed-agents/blob-store";
import {
  functionSchema,
  nonNegativeSafeIntegerSchema,
  positiveSafeIntegerSchema,
} from "@open-managed-agents/runtime-utils";
import { tmpdir } from "node:os";
import * as z from "zod";

/** Options of {@link createWorkspaceSnapshots}. */
export interface WorkspaceSnapshotsOptions {
  /** Where snapshots are kept. */
  readonly store: BlobStore;
  /** First key segment of every object. @default "workspace-snapshots" */
  readonly keyPrefix?: string;
  /** The sandbox folder snapshotted. @default "/workspace" */
  readonly workspace?: string;
  /** Sandbox folder (outside the workspace) of the listing cache. @default "/tmp/.oma-snapshot-cache" */
  readonly cacheDirectory?: string;
  /** Sandbox folder (outside the workspace) for a run's scratch files. @default "/tmp" */
  readonly scratchDirectory?: string;
  /** tar-style patterns left out of every snapshot (a bare name matches any path component). @default [] */
  readonly excludes?: readonly string[];
  /** How bytes travel to and from the sandbox: zstd when both ends have it, else gzip. @default "auto" */
  readonly compression?: "auto" | "gzip" | "off";
  /** Most entries a workspace may hold. @default 1000000 */
  readonly maxEntries?: number;
  /** Size of each file written into the sandbox. @default 8 MiB */
  readonly partBytes?: number;
  /** Local folder for spooled archives and lists. @default os.tmpdir() */
  readonly spoolDirectory?: string;
  /** A session lock not renewed for this long belongs to a process that died. @default 30 s */
  readonly lockTtlMs?: number;
  /** How long a checkpoint or sweep waits for the session's lock. @default 10 min */
  readonly lockWaitMs?: number;
  /** Clock. @default () => new Date() */
  readonly now?: () => Date;
}

const absolute = z
  .string()
  .regex(/^\/[^\0]*$/)
  .refine((path) => !path.split("/").includes(".."));

export const optionsSchema = z
  .object({
    store: z.custom<BlobStore>(
      (value) => typeof value === "object" && value !== null,
      "must be a BlobStore",
    ),
    keyPrefix: z
      .string()
      .min(1)
      .refine(
        (value) =>
          value
            .split("/")
            .every((segment) => segment !== "" && segment !== "." && segment !== ".."),
        "must be `/`-separated segments, none empty, '.' or '..'",
      )
      .default("workspace-snapshots"),
    workspace: absolute.default("/workspace"),
    cacheDirectory: absolute.default("/tmp/.oma-snapshot-cache"),
    scratchDirectory: absolute.default("/tmp"),
    excludes: z.array(z.string().regex(/^[^\0]+$/)).default([]),
    compression: z.enum(["auto", "gzip", "off"]).default("auto"),
    maxEntries: positiveSafeIntegerSchema.default(1_000_000),
    partBytes: positiveSafeIntegerSchema.min(4096).default(8 * 1024 * 1024),
    spoolDirectory: z.string().min(1).default(tmpdir),
    lockTtlMs: positiveSafeIntegerSchema.default(30 * 1000),
    lockWaitMs: nonNegativeSafeIntegerSchema.default(10 * 60 * 1000),
    now: functionSchema<() => Date>().default(() => () => new Date()),
  })
  .strict();

export type ResolvedOptions = z.output<typeof optionsSchema>;
