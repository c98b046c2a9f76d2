import fs, { constants } from "node:fs";
import { link, lstat, lutimes, mkdir, open, symlink, unlink } from "node:fs/promises";
import { join } from "node:path";
import { IO_CHUNK_BYTES, SMALL_FILE_BYTES } from "./constants.js";
import { ancestorsOf, parentOf } from "./entry-name.js";
import type { AdmittedEntry } from "./entry-guard.js";
import { rejectEntry } from "./rejections.js";
import type { TarEntry } from "./tar-reader.js";

/** Mode and mtime a directory gets once everything is in place. */
export interface DirectoryMetadata {
  readonly mode: number;
  readonly mtime: number;
}

const CREATE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
const MAX_PARALLEL_WRITES = 16;

/**
 * Writes admitted entries below a private staging folder. Small files are written in parallel (bounded),
 * large ones streamed in order; nothing ever follows a symlink. Directory modes and times are collected
 * and applied by the caller after the move, so read-only directories never block extraction.
 */
export class StagingWriter {
  /** Directory metadata by root-relative path (`""` is the root). */
  readonly directories = new Map<string, DirectoryMetadata>();
  private readonly knownDirectories = new Set<string>([""]);
  private readonly inFlight = new Map<string, Promise<void>>();
  private failure: { error: unknown } | null = null;

  /**
   * @param staging absolute path of the staging folder
   * @param hardlinkFallback resolves a hardlink target outside the staging folder (merge mode), or null
   */
  constructor(
    private readonly staging: string,
    private readonly hardlinkFallback: ((target: string) => Promise<string | null>) | null,
  ) {}

  /** Writes one entry; `body` is consumed (files) or drained (everything else). */
  async write(entry: AdmittedEntry, body: TarEntry): Promise<void> {
    this.throwIfFailed();
    await this.inFlight.get(entry.path);
    if (entry.kind !== "file") body.resume();
    if (entry.kind === "directory") return this.writeDirectory(entry);
    await this.ensureParent(entry);
    if (entry.kind === "symlink") return this.replaceWith(entry, (path) => this.createSymlink(entry, path));
    if (entry.kind === "hardlink") return this.writeHardlink(entry);
    if (entry.size > SMALL_FILE_BYTES) return this.replaceWith(entry, (path) => writeStreamed(path, entry, body));
    const chunks: Buffer[] = [];
    for await (const chunk of body) chunks.push(chunk as Buffer);
    await this.schedule(entry.path, this.replaceWith(entry, (path) => writeSmall(path, entry, chunks)));
  }

  /** Waits for every pending write and rethrows the first failure. */
  async flush(): Promise<void> {
    await Promise.allSettled(this.inFlight.values());
    this.throwIfFailed();
  }

  /** Waits for pending writes and ignores their outcome (before the staging folder is removed). */
  async settle(): Promise<void> {
    await Promise.allSettled(this.inFlight.values());
  }

  private throwIfFailed(): void {
    if (this.failure) throw this.failure.error;
  }

  private async schedule(path: string, task: Promise<void>): Promise<void> {
    const tracked = task
      .catch((error: unknown) => {
        this.failure ??= { error };
      })
      .finally(() => this.inFlight.delete(path));
    this.inFlight.set(path, tracked);
    while (this.inFlight.size >= MAX_PARALLEL_WRITES) await Promise.race(this.inFlight.values());
    this.throwIfFailed();
  }

  private async writeDirectory(entry: AdmittedEntry): Promise<void> {
    this.directories.set(entry.path, { mode: entry.mode, mtime: entry.mtime });
    if (this.knownDirectories.has(entry.path)) return;
    await this.ensureParent(entry);
    const path = join(this.staging, entry.path);
    try {
      await mkdir(path, { mode: 0o700 });
    } catch (error) {
      if (code(error) !== "EEXIST") throw conflictOr(entry, error);
      const existing = await lstat(path);
      if (!existing.isDirectory()) {
        await unlink(path);
        await mkdir(path, { mode: 0o700 });
      }
    }
    this.knownDirectories.add(entry.path);
  }

  private async ensureParent(entry: AdmittedEntry): Promise<void> {
    const parent = parentOf(entry.path);
    if (this.knownDirectories.has(parent)) return;
    try {
      await mkdir(join(this.staging, parent), { recursive: true, mode: 0o700 });
    } catch (error) {
      throw conflictOr(entry, error);
    }
    for (const ancestor of [...ancestorsOf(parent), parent]) this.knownDirectories.add(ancestor);
  }

  /** Runs `create`; when the name already exists as a non-directory, replaces it (later entries win). */
  private async replaceWith(entry: AdmittedEntry, create: (path: string) => Promise<void>): Promise<void> {
    const path = join(this.staging, entry.path);
    try {
      await create(path);
    } catch (error) {
      if (code(error) !== "EEXIST") throw conflictOr(entry, error);
      if (this.knownDirectories.has(entry.path) || (await lstat(path)).isDirectory()) {
        throw rejectEntry(entry.name, "entry_conflict", "it would replace a directory with a non-directory");
      }
      await unlink(path);
      await create(path);
    }
  }

  private async createSymlink(entry: AdmittedEntry, path: string): Promise<void> {
    await symlink(entry.linkTarget as string, path);
    await lutimes(path, entry.mtime, entry.mtime);
  }

  private async writeHardlink(entry: AdmittedEntry): Promise<void> {
    const target = entry.linkTarget as string;
    await this.inFlight.get(target);
    this.throwIfFailed();
    let existing = join(this.staging, target);
    const stats = await lstat(existing).catch(() => null);
    if (stats === null) {
      const outside = this.hardlinkFallback ? await this.hardlinkFallback(target) : null;
      if (outside === null) throw rejectEntry(entry.name, "hardlink_target_missing", `hardlink target ${JSON.stringify(target)} is not a file of the archive`);
      existing = outside;
    } else if (!stats.isFile()) {
      throw rejectEntry(entry.name, "hardlink_escape", `hardlink target ${JSON.stringify(target)} is not a regular file`);
    }
    await this.replaceWith(entry, (path) => link(existing, path));
  }
}

/**
 * Writes a small file with the callback API on a raw descriptor (open, writev, fchmod, futimes, close):
 * with thousands of files this costs a fraction of the `FileHandle` API.
 */
function writeSmall(path: string, entry: AdmittedEntry, chunks: Buffer[]): Promise<void> {
  return new Promise((resolve, reject) => {
    fs.open(path, CREATE_FLAGS, 0o600, (openError, fd) => {
      if (openError) return reject(openError);
      const finish = (error: unknown) => fs.close(fd, (closeError) => (error || closeError ? reject(error ?? closeError) : resolve()));
      const setMetadata = () =>
        fs.fchmod(fd, entry.mode, (chmodError) => (chmodError ? finish(chmodError) : fs.futimes(fd, entry.mtime, entry.mtime, finish)));
      if (chunks.length === 0) return setMetadata();
      fs.writev(fd, chunks, (writeError, written) => {
        if (writeError) return finish(writeError);
        if (written !== entry.size) return finish(new Error(`short write of ${entry.name}`));
        setMetadata();
      });
    });
  });
}

/** Streams a large body with one write in flight while the next batch is read. */
async function writeStreamed(path: string, entry: AdmittedEntry, body: TarEntry): Promise<void> {
  const handle = await open(path, CREATE_FLAGS, 0o600);
  let pending: Promise<unknown> | null = null;
  try {
    let batch: Buffer[] = [];
    let batchBytes = 0;
    for await (const chunk of body) {
      batch.push(chunk as Buffer);
      batchBytes += (chunk as Buffer).length;
      if (batchBytes < IO_CHUNK_BYTES) continue;
      await pending;
      pending = handle.writev(batch);
      batch = [];
      batchBytes = 0;
    }
    await pending;
    pending = null;
    if (batch.length > 0) await handle.writev(batch);
    await handle.chmod(entry.mode);
    await handle.utimes(entry.mtime, entry.mtime);
  } finally {
    await pending?.catch(() => undefined);
    await handle.close();
  }
}

function code(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}

function conflictOr(entry: AdmittedEntry, error: unknown): unknown {
  const errno = code(error);
  if (errno === "ENOTDIR" || errno === "EEXIST" || errno === "EISDIR" || errno === "ELOOP") {
    return rejectEntry(entry.name, "entry_conflict", `it conflicts with an earlier entry (${errno})`);
  }
  return error;
}
