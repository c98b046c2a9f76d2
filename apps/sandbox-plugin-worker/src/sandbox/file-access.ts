import { streamFile } from "@cloudflare/sandbox";
import {
  InvalidRequestError,
  NotFoundError,
  SandboxFailedError,
} from "@open-managed-agents/runtime-resource-contract";
import type { DirectoryEntry } from "../protocol/schemas.js";
import { SESSIONLESS, quoteArgument } from "./command-line.js";
import type { CommandHost } from "./command-runner.js";

/** An entry as the SDK's `listFiles` reports it. */
interface SdkFileInfo {
  readonly name: string;
  readonly absolutePath: string;
  readonly type: "file" | "directory" | "symlink" | "other";
  readonly size: number;
  readonly modifiedAt: string;
  readonly mode: string;
}

/** The SDK file calls the routes use, all sessionless. */
export interface FileHost extends CommandHost {
  readFileStream(
    path: string,
    options?: { sessionId?: string },
  ): Promise<ReadableStream<Uint8Array>>;
  writeFile(
    path: string,
    content: string,
    options?: { encoding?: string; sessionId?: string },
  ): Promise<unknown>;
  mkdir(path: string, options?: { recursive?: boolean; sessionId?: string }): Promise<unknown>;
  listFiles(
    path: string,
    options?: { recursive?: boolean; includeHidden?: boolean; sessionId?: string },
  ): Promise<{ files: readonly SdkFileInfo[] }>;
  deleteFile(path: string, sessionId?: string): Promise<unknown>;
}

/** Exit status of the removal script when the path does not exist. */
const MISSING_EXIT_CODE = 44;
const encoder = new TextEncoder();

function toBytes(chunk: Uint8Array | string): Uint8Array {
  return typeof chunk === "string" ? encoder.encode(chunk) : chunk;
}

/**
 * Streams a file's bytes. The first chunk is read before answering, so a missing file or a directory
 * fails the call instead of a stream that has already begun.
 */
export async function readPath(host: FileHost, path: string): Promise<ReadableStream<Uint8Array>> {
  const chunks = streamFile(await host.readFileStream(path, { sessionId: SESSIONLESS }));
  const first = await chunks.next();
  let pending: Uint8Array | undefined = first.done ? undefined : toBytes(first.value);
  let done = first.done === true;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (pending !== undefined) {
        controller.enqueue(pending);
        pending = undefined;
        return;
      }
      if (done) {
        controller.close();
        return;
      }
      const next = await chunks.next();
      if (next.done) {
        done = true;
        controller.close();
      } else {
        controller.enqueue(toBytes(next.value));
      }
    },
    async cancel() {
      await chunks.return(undefined as never);
    },
  });
}

function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let offset = 0; offset < bytes.length; offset += 0x8000)
    binary += String.fromCharCode(...bytes.subarray(offset, offset + 0x8000));
  return btoa(binary);
}

/** Writes a file, creating its parent directories. */
export async function writePath(host: FileHost, path: string, content: Uint8Array): Promise<void> {
  const parent = path.slice(0, path.lastIndexOf("/"));
  if (parent !== "") await host.mkdir(parent, { recursive: true, sessionId: SESSIONLESS });
  await host.writeFile(path, toBase64(content), { encoding: "base64", sessionId: SESSIONLESS });
}

/** Creates a directory; `recursive` also creates missing parents and accepts an existing directory. */
export async function makeDirectory(
  host: FileHost,
  path: string,
  recursive: boolean,
): Promise<void> {
  await host.mkdir(path, { recursive, sessionId: SESSIONLESS });
}

/** Lists a directory (hidden entries included). */
export async function listDirectory(
  host: FileHost,
  path: string,
  recursive: boolean,
): Promise<DirectoryEntry[]> {
  const listing = await host.listFiles(path, {
    recursive,
    includeHidden: true,
    sessionId: SESSIONLESS,
  });
  return listing.files.map((file) => ({
    name: file.name,
    path: file.absolutePath,
    type: file.type,
    size: file.size,
    modifiedAt: file.modifiedAt,
    mode: file.mode,
  }));
}

/**
 * Removes a file, or with `recursive` a directory tree. A missing path is `not_found`; `/` is refused.
 */
export async function removePath(host: FileHost, path: string, recursive: boolean): Promise<void> {
  if (!recursive) {
    await host.deleteFile(path, SESSIONLESS);
    return;
  }
  if (/^\/+$/.test(path))
    throw new InvalidRequestError({ message: "refusing to remove /", context: { path } });
  const quoted = quoteArgument(path);
  const script = `if [ ! -e ${quoted} ] && [ ! -L ${quoted} ]; then exit ${MISSING_EXIT_CODE}; fi; rm -rf -- ${quoted}`;
  const result = await host.execWithSessionToken(`sh -c ${quoteArgument(script)}`, SESSIONLESS);
  if (result.exitCode === MISSING_EXIT_CODE)
    throw new NotFoundError({ message: `no such file or directory: ${path}`, context: { path } });
  if (result.exitCode !== 0)
    throw new SandboxFailedError({
      message: `removing ${path} failed: ${result.stderr.trim()}`,
      context: { path, exitCode: result.exitCode },
    });
}
