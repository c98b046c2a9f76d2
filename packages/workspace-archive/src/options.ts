import * as z from "zod";
import { parseRecord } from "@open-managed-agents/runtime-resource-contract";
import { positiveSafeIntegerSchema } from "@open-managed-agents/runtime-utils";
import { DEFAULT_CHUNK_DIRECTORY, DEFAULT_LIMITS, MIN_PART_BYTES } from "./archive-limits.js";

const positiveInteger = positiveSafeIntegerSchema;

const limitsSchema = z
  .object({
    maxEntries: positiveInteger.optional(),
    maxBytes: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER).optional(),
    maxEntryBytes: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER).optional(),
  })
  .strict()
  .optional();

const gzipInputSchema = z.union([z.boolean(), z.literal("auto")]).optional();

const relativeFolder = z
  .string()
  .min(1)
  .refine((value) => !value.startsWith("/"), "must be relative")
  .refine((value) => !value.split("/").includes(".."), "must not contain '..'")
  .refine(
    (value) => !value.includes("\0") && !value.includes("\n"),
    "must not contain NUL or newline",
  )
  .refine(
    (value) => value.split("/").some((segment) => segment !== "" && segment !== "."),
    "must name a folder below the root",
  );

const packSchema = z
  .object({
    excludes: z.array(z.string().min(1)).optional(),
    gzip: z
      .union([z.boolean(), z.object({ level: z.number().int().min(0).max(9).optional() }).strict()])
      .optional(),
  })
  .strict();

const readSchema = z
  .object({
    limits: limitsSchema,
    gzip: gzipInputSchema,
    allowSymlinksOutsideRoot: z.boolean().optional(),
    absoluteRoot: z
      .string()
      .regex(/^(\/[^/\0]+)+$/, "must be an absolute path without a trailing '/'")
      .refine(
        (value) => !value.split("/").some((segment) => segment === "." || segment === ".."),
        "must not contain '.' or '..' segments",
      )
      .optional(),
  })
  .strict();

const extractSchema = readSchema
  .extend({
    mode: z.enum(["replace", "merge"]).optional(),
    expectedSha256: z
      .string()
      .regex(/^[0-9a-f]{64}$/, "must be 64 lowercase hex digits")
      .optional(),
  })
  .strict();

const inspectSchema = readSchema
  .extend({
    onEntry: z
      .custom<(entry: never) => void>((value) => typeof value === "function", "must be a function")
      .optional(),
  })
  .strict();

const splitSchema = readSchema
  .extend({
    maxPartBytes: z
      .number()
      .int()
      .min(MIN_PART_BYTES)
      .max(2 ** 31 - 1),
    chunkDirectory: relativeFolder.optional(),
  })
  .strict();

/** Limits an archive must stay within. Every field is a hard cap; the first one crossed rejects the archive. */
export interface ArchiveLimits {
  /** Entries of any type, the root entry included. @default 1_000_000 */
  readonly maxEntries: number;
  /** Sum of the sizes of all regular files. @default 10 GiB */
  readonly maxBytes: number;
  /** Size of one regular file. @default 10 GiB */
  readonly maxEntryBytes: number;
}

/** Options shared by every function that reads an archive. */
export interface ReadArchiveOptions {
  /** Caps on entries and bytes; unset fields take {@link DEFAULT_LIMITS}. */
  readonly limits?: Partial<ArchiveLimits>;
  /** `true`: the input is gzip; `false`: plain tar; `"auto"` (default): detected from the magic bytes. */
  readonly gzip?: boolean | "auto";
  /**
   * Accept symlinks whose target lies outside the root (for example `venv/bin/python -> /usr/bin/python3`).
   * Entries are still never written through any symlink. @default false
   */
  readonly allowSymlinksOutsideRoot?: boolean;
  /**
   * The absolute path the root is extracted to where the links are followed (`/workspace` inside a
   * sandbox). An absolute symlink target at or below it is checked as the path inside the root it names;
   * every other absolute target still points outside. Unset: every absolute target points outside.
   */
  readonly absoluteRoot?: string;
}

/** Validated form of {@link ReadArchiveOptions}. */
export interface ResolvedReadOptions {
  readonly limits: ArchiveLimits;
  readonly gzip: boolean | "auto";
  readonly allowSymlinksOutsideRoot: boolean;
  readonly absoluteRoot: string | null;
}

function resolveRead(options: z.output<typeof readSchema>): ResolvedReadOptions {
  return {
    limits: { ...DEFAULT_LIMITS, ...stripUndefined(options.limits ?? {}) },
    gzip: options.gzip ?? "auto",
    allowSymlinksOutsideRoot: options.allowSymlinksOutsideRoot ?? false,
    absoluteRoot: options.absoluteRoot ?? null,
  };
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(value).filter(([, field]) => field !== undefined),
  ) as Partial<T>;
}

function parse<S extends z.ZodType>(schema: S, input: unknown, record: string): z.output<S> {
  return parseRecord(schema, input ?? {}, { record, code: "invalid_config" });
}

/** Validates `packDirectory` options; throws `invalid_config` naming the field. */
export function parsePackOptions(input: unknown): {
  excludes: readonly string[];
  gzipLevel: number | null;
} {
  const options = parse(packSchema, input, "packDirectory options");
  const gzip = options.gzip;
  const gzipLevel =
    gzip === undefined || gzip === false ? null : gzip === true ? 1 : (gzip.level ?? 1);
  return { excludes: options.excludes ?? [], gzipLevel };
}

/** Validates `extractArchive` options; throws `invalid_config` naming the field. */
export function parseExtractOptions(input: unknown): ResolvedReadOptions & {
  readonly mode: "replace" | "merge";
  readonly expectedSha256: string | null;
} {
  const options = parse(extractSchema, input, "extractArchive options");
  return {
    ...resolveRead(options),
    mode: options.mode ?? "replace",
    expectedSha256: options.expectedSha256 ?? null,
  };
}

/** Validates `inspectArchive` options; throws `invalid_config` naming the field. */
export function parseInspectOptions<E>(
  input: unknown,
): ResolvedReadOptions & { readonly onEntry: ((entry: E) => void) | null } {
  const options = parse(inspectSchema, input, "inspectArchive options");
  return {
    ...resolveRead(options),
    onEntry: (options.onEntry as ((entry: E) => void) | undefined) ?? null,
  };
}

/** Validates `splitArchive` options; throws `invalid_config` naming the field. */
export function parseSplitOptions(input: unknown): ResolvedReadOptions & {
  readonly maxPartBytes: number;
  readonly chunkDirectory: string;
} {
  const options = parse(splitSchema, input, "splitArchive options");
  const chunkDirectory = (options.chunkDirectory ?? DEFAULT_CHUNK_DIRECTORY)
    .split("/")
    .filter((part) => part !== "" && part !== ".")
    .join("/");
  return { ...resolveRead(options), maxPartBytes: options.maxPartBytes, chunkDirectory };
}
