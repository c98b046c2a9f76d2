import type { Header } from "tar-stream";
import type { AdmittedEntry } from "./entry-guard.js";
import { type ArchiveSummary, type InspectArchiveOptions, createAdmission } from "./inspect-archive.js";
import { parseInspectOptions } from "./options.js";
import type { MemberHeader } from "./tar-header.js";

/** One entry described by its header alone (owners play no part in the checks). */
export type ListedHeader = Pick<MemberHeader, "name" | "type" | "mode" | "mtime" | "size" | "linkname">;

/** What {@link inspectHeaders} reports: the archive summary without the byte-stream fields. */
export type HeaderInspection = Omit<ArchiveSummary, "archiveBytes" | "gzip">;

/**
 * Applies every check {@link inspectArchive} applies (names, entry types, links, write-through, limits) to
 * entries given as headers, with no tar bytes in between: for a listing that describes an archive not yet
 * made, such as a checkpoint manifest. Rejects with `archive_rejected` / `limit_exceeded` naming the first
 * offending entry, exactly as the archive of those headers would be rejected.
 */
export async function inspectHeaders(headers: Iterable<ListedHeader> | AsyncIterable<ListedHeader>, options: InspectArchiveOptions = {}): Promise<HeaderInspection> {
  const admission = createAdmission(parseInspectOptions<AdmittedEntry>(options));
  for await (const header of headers) admission.admit(asTarHeader(header));
  return admission.finish();
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
