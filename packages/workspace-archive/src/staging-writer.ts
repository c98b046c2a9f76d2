import fs, { constants } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { join } from "node:path";
import { IO_CHUNK_BYTES, SMALL_FILE_BYTES } from "./io-sizes.js";
import { ancestorsOf, parentOf } from "./entry-name.js";
import type { AdmittedEntry } from "./entry-guard.js";
import { rejectEntry } from "./rejections.js";
import type { SourceRelease } from "./recycled-file-source.js";
import type { TarEntry } from "./tar-reader.js";

/** Mode and mtime a directory gets once everything is in place. */
export interface DirectoryMetadata {
  readonly mode: number;
  readonly mtime: number;
}

const CREATE_FLAGS =
  constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/**
 * Writes admitted entries below a private staging folder, never following a symlink. Metadata calls and
 * small files use short synchronous calls (the thread-pool round trip costs more than the work for tiny
 * files); large files are streamed with one write in flight. Directory modes and times are collected and
 * applied by the caller after the move, so read-only directories never block extraction.
 */
export class StagingWriter {
  /** Directory metadata by root-relative path (`""` is the root). */
  readonly directories = new Map<string, DirectoryMetadata>();
  private readonly knownDirectories = new Set<string>([""]);

  /**
   * @param staging absolute path of the staging folder
   * @param hardlinkFallback resolves a hardlink target outside the staging folder (merge mode), or null
   * @param release told which source bytes are no longer referenced (when the source reuses buffers)
   */
  constructor(
    private readonly staging: string,
    private readonly hardlinkFallback: ((target: string) => Promise<string | null>) | null,
    private readonly release: SourceRelease | null = null,
  ) {}

  /** Writes one entry; `body` is consumed (files) or drained (everything else). */
  async write(entry: AdmittedEntry, body: TarEntry): Promise<void> {
    const dataStart = (body.header as { byteOffset?: number }).byteOffset;
    await this.writeEntry(entry, body, dataStart ?? null);
    // Without an offset nothing is ever settled, and the source keeps using fresh buffers.
    if (dataStart !== undefined) this.release?.settle(dataStart + entry.size);
  }

  private async writeEntry(
    entry: AdmittedEntry,
    body: TarEntry,
    dataStart: number | null,
  ): Promise<void> {
    if (entry.kind !== "file") body.resume();
    if (entry.kind === "directory") return this.writeDirectory(entry);
    this.ensureParent(entry);
    const path = join(this.staging, entry.path);
    if (entry.kind === "symlink") {
      this.replaceWith(entry, () => {
        fs.symlinkSync(entry.linkTarget as string, path);
        fs.lutimesSync(path, entry.mtime, entry.mtime);
      });
    } else if (entry.kind === "hardlink") {
      const existing = await this.hardlinkTarget(entry);
      this.replaceWith(entry, () => fs.linkSync(existing, path));
    } else if (entry.size > SMALL_FILE_BYTES) {
      const release = dataStart === null ? null : this.release;
      await this.replaceWithAsync(entry, () =>
        writeStreamed(path, entry, body, release, dataStart ?? 0),
      );
    } else {
      const chunks: Buffer[] = [];
      for await (const chunk of body) chunks.push(chunk as Buffer);
      this.replaceWith(entry, () => writeSmall(path, entry, chunks));
    }
  }

  private writeDirectory(entry: AdmittedEntry): void {
    this.directories.set(entry.path, { mode: entry.mode, mtime: entry.mtime });
    if (this.knownDirectories.has(entry.path)) return;
    this.ensureParent(entry);
    const path = join(this.staging, entry.path);
    try {
      fs.mkdirSync(path, { mode: 0o700 });
    } catch (error) {
      if (code(error) !== "EEXIST") throw conflictOr(entry, error);
      if (!fs.lstatSync(path).isDirectory()) {
        fs.unlinkSync(path);
        fs.mkdirSync(path, { mode: 0o700 });
      }
    }
    this.knownDirectories.add(entry.path);
  }

  private ensureParent(entry: AdmittedEntry): void {
    const parent = parentOf(entry.path);
    if (this.knownDirectories.has(parent)) return;
    try {
      fs.mkdirSync(join(this.staging, parent), { recursive: true, mode: 0o700 });
    } catch (error) {
      throw conflictOr(entry, error);
    }
    for (const ancestor of [...ancestorsOf(parent), parent]) this.knownDirectories.add(ancestor);
  }

  /** Runs `create`; when the name already exists as a non-directory, replaces it (later entries win). */
  private replaceWith(entry: AdmittedEntry, create: () => void): void {
    try {
      create();
    } catch (error) {
      this.removeExisting(entry, error);
      create();
    }
  }

  private async replaceWithAsync(entry: AdmittedEntry, create: () => Promise<void>): Promise<void> {
    try {
      await create();
    } catch (error) {
      this.removeExisting(entry, error);
      await create();
    }
  }

  private removeExisting(entry: AdmittedEntry, error: unknown): void {
    if (code(error) !== "EEXIST") throw conflictOr(entry, error);
    const path = join(this.staging, entry.path);
    if (this.knownDirectories.has(entry.path) || fs.lstatSync(path).isDirectory()) {
      throw rejectEntry(
        entry.name,
        "entry_conflict",
        "it would replace a directory with a non-directory",
      );
    }
    fs.unlinkSync(path);
  }

  private async hardlinkTarget(entry: AdmittedEntry): Promise<string> {
    const target = entry.linkTarget as string;
    const inStaging = join(this.staging, target);
    const stats = fs.lstatSync(inStaging, { throwIfNoEntry: false });
    if (stats?.isFile()) return inStaging;
    if (stats !== undefined)
      throw rejectEntry(
        entry.name,
        "hardlink_escape",
        `hardlink target ${JSON.stringify(target)} is not a regular file`,
      );
    const outside = this.hardlinkFallback ? await this.hardlinkFallback(target) : null;
    if (outside === null)
      throw rejectEntry(
        entry.name,
        "hardlink_target_missing",
        `hardlink target ${JSON.stringify(target)} is not a file of the archive`,
      );
    return outside;
  }
}

function writeSmall(path: string, entry: AdmittedEntry, chunks: Buffer[]): void {
  const fd = fs.openSync(path, CREATE_FLAGS, 0o600);
  try {
    let written = 0;
    while (written < entry.size)
      written += fs.writevSync(
        fd,
        written === 0 ? chunks : [Buffer.concat(chunks).subarray(written)],
      );
    fs.fchmodSync(fd, entry.mode);
    fs.futimesSync(fd, entry.mtime, entry.mtime);
  } finally {
    fs.closeSync(fd);
  }
}

/** Writes kept in flight for a large file (positional, so their order does not matter). */
const WRITE_BEHIND = 4;

/**
 * Streams a large body in 1 MiB positional writes, up to four in flight while the next bytes are parsed.
 * Each write holds its source bytes in `release` until it completes.
 */
async function writeStreamed(
  path: string,
  entry: AdmittedEntry,
  body: TarEntry,
  release: SourceRelease | null,
  dataStart: number,
): Promise<void> {
  const handle = await open(path, CREATE_FLAGS, 0o600);
  const pending: Promise<unknown>[] = [];
  try {
    let position = 0;
    let batch: Buffer[] = [];
    let batchBytes = 0;
    const flush = async () => {
      if (pending.length >= WRITE_BEHIND) await pending.shift();
      const token = release?.hold(dataStart + position);
      pending.push(
        writeAll(handle, batch, batchBytes, position).finally(
          () => token !== undefined && release?.drop(token),
        ),
      );
      release?.settle(dataStart + position + batchBytes);
      position += batchBytes;
      batch = [];
      batchBytes = 0;
    };
    for await (const chunk of body) {
      batch.push(chunk as Buffer);
      batchBytes += (chunk as Buffer).length;
      if (batchBytes >= IO_CHUNK_BYTES) await flush();
    }
    if (batchBytes > 0) await flush();
    await Promise.all(pending.splice(0));
    await handle.chmod(entry.mode);
    await handle.utimes(entry.mtime, entry.mtime);
  } finally {
    await Promise.allSettled(pending);
    await handle.close();
  }
}

/** Positional `writev` of a batch (no copy into one buffer); finishes a short write with plain writes. */
async function writeAll(
  handle: FileHandle,
  batch: Buffer[],
  bytes: number,
  position: number,
): Promise<void> {
  const { bytesWritten } = await handle.writev(batch, position);
  if (bytesWritten === bytes) return;
  const rest = Buffer.concat(batch, bytes).subarray(bytesWritten);
  let written = 0;
  while (written < rest.length) {
    const result = await handle.write(
      rest,
      written,
      rest.length - written,
      position + bytesWritten + written,
    );
    written += result.bytesWritten;
  }
}

function code(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}

function conflictOr(entry: AdmittedEntry, error: unknown): unknown {
  const errno = code(error);
  if (errno === "ENOTDIR" || errno === "EEXIST" || errno === "EISDIR" || errno === "ELOOP") {
    return rejectEntry(
      entry.name,
      "entry_conflict",
      `it conflicts with an earlier entry (${errno})`,
    );
  }
  return error;
}
