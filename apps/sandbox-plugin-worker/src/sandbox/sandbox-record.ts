import { sha256Hex, stableJson } from "@open-managed-agents/runtime-utils";
import * as z from "zod";
import type { SandboxView } from "../protocol/schemas.js";

/** Storage key of the record in each sandbox object. */
export const RECORD_KEY = "plugin:sandbox";

/** What a sandbox object keeps about its sandbox. `env` is stored for the instance and never reported. */
export const sandboxRecordSchema = z
  .object({
    id: z.string(),
    installation: z.string(),
    image: z.string(),
    instanceType: z.string(),
    binding: z.string(),
    env: z.record(z.string(), z.string()),
    /** SHA-256 of the create request's identity (image, size, env); a replay must match it. */
    fingerprint: z.string(),
    createdAt: z.number(),
    expiresAt: z.number(),
    /** Set once the instance answered; a record without it never had an instance. */
    startedAt: z.number().optional(),
  })
  .strict();
export type SandboxRecord = z.infer<typeof sandboxRecordSchema>;

/** What a create asks of a sandbox object. */
export interface ProvisionSpec {
  readonly id: string;
  readonly installation: string;
  readonly image: string;
  readonly instanceType: string;
  readonly binding: string;
  readonly env: Readonly<Record<string, string>>;
  readonly fingerprint: string;
  readonly ttlSeconds: number;
}

/** The protocol's view of a record, given whether an instance runs and whether a start is in flight. */
export function toView(record: SandboxRecord, running: boolean, starting: boolean): SandboxView {
  const state = starting ? "starting" : running ? "running" : "stopped";
  return {
    id: record.id,
    installation: record.installation,
    image: record.image,
    instanceType: record.instanceType,
    state,
    lost: state === "stopped" && record.startedAt !== undefined,
    createdAt: new Date(record.createdAt).toISOString(),
    expiresAt: new Date(record.expiresAt).toISOString(),
  };
}

/** SHA-256 hex of the parts of a create request that make it the same sandbox. */
export async function createFingerprint(parts: {
  image: string;
  size: unknown;
  env: Readonly<Record<string, string>>;
}): Promise<string> {
  return sha256Hex(stableJson({ image: parts.image, size: parts.size, env: parts.env }));
}
