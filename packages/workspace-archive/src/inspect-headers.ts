import type { Header } from "tar-stream";
import type { AdmittedEntry } from "./entry-guard.js";
import {
  type ArchiveSummary,
  type InspectArchiveOptions,
  createAdmission,
} from "./inspect-archive.js";
import { parseInspectOptions } from "./options.js";
import type { MemberHeader } from "./tar-header.js";

/** One entry described by its header alone (owners play no part in the checks). */
export type ListedHeader = Pick<
  MemberHeader,
  "name" | "type" | "mode" | "mtime" | "size" | "linkname"
>;

/** What {@link inspectHeaders} reports: the archive summary without the byte-stream fields. */
export type HeaderInspection = Omit<ArchiveSummary, "archiveBytes" | "gzip">;

/**
 * Applies every check {@link inspectArchive} applies (names, entry types, links, write-through, limits) to
 * entries given as headers, with no tar bytes in between: for a listing that describes an archive not yet
 * made, such as a checkpoint manifest. Rejects with `archive_rejected` / `limit_exceeded` naming the first
 * offending entry, exactly as the archive of those headers would be rejected.
 */
export async function inspectHeaders(
  headers: Iterable<ListedHeader> | AsyncIterable<ListedHeader>,
  options: InspectArchiveOptions = {},
): Promise<HeaderInspection> {
  const inspection = createHeaderInspection(options);
  for await (const header of headers) inspection.admit(header);
  return inspection.finish();
}

/** The checks of {@link inspectHeaders} one header at a time, for a caller that produces headers as it goes. */
export interface HeaderInspector {
  /** Checks one header (throws `archive_rejected` / `limit_exceeded` naming it). */
  admit(header: ListedHeader): void;
  /** Resolves every symlink admitted through the others; the summary of what was admitted. */
  finish(): Promise<HeaderInspection>;
}

/**
 * {@link inspectHeaders} as a push API: the same checks, header by header, with the symlink resolution and
 * the summary at {@link HeaderInspector.finish}. Options are validated here, once.
 */
export function createHeaderInspection(options: InspectArchiveOptions = {}): HeaderInspector {
  const admission = createAdmission(parseInspectOptions<AdmittedEntry>(options));
  return {
    admit: (header) => admission.admit(asTarHeader(header)),
    finish: () => admission.finish(),
  };
}

/** The header as the tar reader would have decoded it: mode within 07777, mtime as a date, no body for non-files. */
function asTarHeader(header: ListedHeader): Header {
  return {
    name: header.name,
    type: header.type,
    mode: header.mode & 0o7777,
    mtime: new Date(header.mtime * 1000),
    size: header.type === "file" ? header.size : 0,
    linkname: header.linkname ?? "",
  } as Header;
}
