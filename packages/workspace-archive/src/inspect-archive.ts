import type { Header } from "tar-stream";
import type { ArchiveSource } from "./archive-source.js";
import { type AdmittedEntry, EntryGuard } from "./entry-guard.js";
import {
  parseInspectOptions,
  type ReadArchiveOptions,
  type ResolvedReadOptions,
} from "./options.js";
import { createSourceMeter, readTarEntries } from "./tar-reader.js";

/** Options of {@link inspectArchive}. */
export interface InspectArchiveOptions extends ReadArchiveOptions {
  /** Called once per admitted entry, in archive order. */
  readonly onEntry?: (entry: AdmittedEntry) => void;
}

/** What {@link inspectArchive} and {@link extractArchive} report about an archive they accepted. */
export interface ArchiveSummary {
  /** Entries of any type, the root entry included. */
  readonly entries: number;
  readonly files: number;
  readonly directories: number;
  readonly symlinks: number;
  readonly hardlinks: number;
  /** Sum of regular-file sizes. */
  readonly bytes: number;
  /** Bytes read from the source (compressed bytes when it is gzip). */
  readonly archiveBytes: number;
  /** Whether the source was gzip. */
  readonly gzip: boolean;
}

/** {@link ArchiveSummary} plus the sha256 of the source bytes. */
export interface ArchiveInspection extends ArchiveSummary {
  /** Lowercase hex sha256 of the bytes read from the source. */
  readonly sha256: string;
}

/** Mutable counters behind an {@link ArchiveSummary}. */
export interface SummaryCounters {
  files: number;
  directories: number;
  symlinks: number;
  hardlinks: number;
}

/** Fresh zeroed counters. */
export function createCounters(): SummaryCounters {
  return { files: 0, directories: 0, symlinks: 0, hardlinks: 0 };
}

/** Adds one admitted entry to the counters. */
export function countEntry(counters: SummaryCounters, entry: AdmittedEntry): void {
  if (entry.kind === "file") counters.files += 1;
  else if (entry.kind === "directory") counters.directories += 1;
  else if (entry.kind === "symlink") counters.symlinks += 1;
  else counters.hardlinks += 1;
}

/**
 * Reads a whole archive without writing anything and applies every check {@link extractArchive} applies:
 * names, entry types, links, write-through and limits. Resolves with a summary, or rejects with
 * `archive_rejected` / `limit_exceeded` naming the first offending entry.
 */
export async function inspectArchive(
  source: ArchiveSource,
  options: InspectArchiveOptions = {},
): Promise<ArchiveInspection> {
  const resolved = parseInspectOptions<AdmittedEntry>(options);
  const admission = createAdmission(resolved);
  const meter = createSourceMeter(true);
  for await (const entry of readTarEntries(source, resolved.gzip, meter)) {
    admission.admit(entry.header);
    entry.resume();
  }
  return {
    ...(await admission.finish()),
    archiveBytes: meter.bytes,
    gzip: meter.gzip,
    sha256: meter.hash?.digest("hex") ?? "",
  };
}

/** The checks of an inspection, one header at a time, and the summary once every header was admitted. */
export interface Admission {
  /** Checks one header (throws `archive_rejected` / `limit_exceeded`), counts it and reports it to `onEntry`. */
  admit(header: Header): void;
  /** Resolves every symlink seen through the others; the summary of what was admitted. */
  finish(): Promise<Omit<ArchiveSummary, "archiveBytes" | "gzip">>;
}

/** An {@link Admission} under validated inspect options; shared by every inspection, whatever feeds it headers. */
export function createAdmission(
  resolved: ResolvedReadOptions & { readonly onEntry: ((entry: AdmittedEntry) => void) | null },
): Admission {
  const guard = new EntryGuard(resolved);
  const counters = createCounters();
  return {
    admit(header) {
      const admitted = guard.admit(header);
      countEntry(counters, admitted);
      resolved.onEntry?.(admitted);
    },
    async finish() {
      await guard.verifySymlinks();
      return { entries: guard.entries, ...counters, bytes: guard.bytes };
    },
  };
}
