import type { BlobStore } from "@open-managed-agents/blob-store";
import { parseRecord } from "@open-managed-agents/runtime-resource-contract";
import * as z from "zod";

/** Provider id of this driver: leases, checkpoint handles and the descriptor carry it. */
export const TEMPLATE_PROVIDER = "driver-template";

/** Options of {@link createManagedRuntimeProviderDriver}. Validated once; failure is `invalid_config` naming the field. */
export interface TemplateDriverOptions {
  /** Host directory for runtimes and checkpoints. */
  readonly rootDir: string;
  /** Where session outputs go. @default a filesystem store under `rootDir/outputs` */
  readonly outputStore?: BlobStore;
  /** TTL the host renews. @default 30_000 */
  readonly leaseTtlMs?: number;
}

const optionsSchema = z.strictObject({
  rootDir: z.string().refine((dir) => dir.startsWith("/"), "must be an absolute path"),
  outputStore: z
    .custom<BlobStore>(
      (value) => typeof (value as { put?: unknown } | null)?.put === "function",
      "must be a BlobStore",
    )
    .optional(),
  leaseTtlMs: z.number().int().positive().default(30_000),
});

/** Options after validation, with defaults applied. */
export type ResolvedTemplateDriverOptions = z.output<typeof optionsSchema>;

/** Validates the factory options once. */
export function parseTemplateDriverOptions(options: unknown): ResolvedTemplateDriverOptions {
  return parseRecord(optionsSchema, options, {
    record: "driver-template options",
    code: "invalid_config",
  });
}
