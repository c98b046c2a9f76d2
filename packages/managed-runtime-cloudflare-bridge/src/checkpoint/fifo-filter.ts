import { spawn } from "node:child_process";
import { childEnvironment } from "@open-managed-agents/runtime-utils/node";
import { constants } from "node:fs";
import { type FileHandle, mkdtemp, open, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Bytes read from the filter's output at a time, into one buffer reused for every read. */
const READ_BYTES = 256 * 1024;

/**
 * Runs `command args… -o <fifo>` (a filter such as `zstd -d -c`) over `source` and yields its output read from a
 * named pipe into one reused buffer: each piece is a view, valid until the next is asked for. Input chunks are
 * handed over one at a time (the next is read from `source` once the process took the previous), so a
 * source may reuse its buffers too. Reading a child's stdout would allocate a buffer per read, all of
 * them garbage until a collection: hundreds of MiB for a workspace's archive, which is what this avoids.
 * A non-zero exit, a spawn failure or a failing source fails the iteration; leaving it early kills the process.
 */
export async function* fifoFilter(
  command: string,
  args: readonly string[],
  source: AsyncIterable<Uint8Array>,
): AsyncGenerator<Buffer> {
  const directory = await mkdtemp(join(tmpdir(), "oma-bridge-filter-"));
  const fifo = join(directory, "out");
  let reader: FileHandle | null = null;
  let child: ReturnType<typeof spawn> | null = null;
  try {
    await run("mkfifo", ["-m", "600", fifo]);
    const spawned = spawn(command, [...args, "-o", fifo], {
      env: childEnvironment(),
      stdio: ["pipe", "ignore", "pipe"],
    });
    child = spawned;
    let stderr = "";
    spawned.stderr
      ?.setEncoding("utf8")
      .on("data", (chunk: string) => void (stderr = (stderr + chunk).slice(-512)));
    const exited = new Promise<void>((resolve, reject) => {
      spawned.once("error", reject);
      spawned.once("close", (code, signal) =>
        code === 0
          ? resolve()
          : reject(new Error(`${command} exited with ${code ?? signal}: ${stderr.trim()}`)),
      );
    });
    exited.catch(() => undefined);
    // Opening the read end waits for the writer; a process that ends before it opened the pipe would leave
    // that wait hanging, so its end opens (and closes) the write end once.
    let opened = false;
    const unblock = () => {
      if (!opened)
        void open(fifo, constants.O_WRONLY | constants.O_NONBLOCK).then(
          (handle) => handle.close(),
          () => undefined,
        );
    };
    exited.then(unblock, unblock);
    // A source that failed is the cause of whatever the process then does; a write the process refused (it
    // exited, so its stdin broke) is not, and its exit says why.
    let sourceFailed = false;
    const feeding = feed(spawned, source, () => {
      sourceFailed = true;
      spawned.kill("SIGKILL");
    });
    // Its failure is reported below, or not at all when the reader left early.
    feeding.catch(() => undefined);
    reader = await open(fifo, constants.O_RDONLY);
    opened = true;
    const buffer = Buffer.allocUnsafeSlow(READ_BYTES);
    for (;;) {
      const { bytesRead } = await reader.read(buffer, 0, READ_BYTES, null);
      if (bytesRead === 0) break;
      yield buffer.subarray(0, bytesRead);
    }
    // The pipe's end is only the end when the process succeeded and took all its input; when it failed, its
    // own complaint says more than the broken pipe its input then met.
    const [fed, done] = await Promise.allSettled([feeding, exited]);
    if (fed.status === "rejected" && sourceFailed) throw fed.reason;
    if (done.status === "rejected") throw done.reason;
    if (fed.status === "rejected") throw fed.reason;
  } finally {
    if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await reader?.close().catch(() => undefined);
    await rm(directory, { recursive: true, force: true });
  }
}

/**
 * Writes `source` into the process's stdin one chunk at a time, each once the previous was taken; calls
 * `onSourceFailed` when reading the source (not writing to the process) fails.
 */
async function feed(
  child: ReturnType<typeof spawn>,
  source: AsyncIterable<Uint8Array>,
  onSourceFailed: () => void,
): Promise<void> {
  const stdin = child.stdin;
  if (!stdin) throw new Error("the filter process has no stdin");
  stdin.on("error", () => undefined);
  const chunks = source[Symbol.asyncIterator]();
  for (;;) {
    let next: IteratorResult<Uint8Array>;
    try {
      next = await chunks.next();
    } catch (error) {
      onSourceFailed();
      throw error;
    }
    if (next.done) break;
    const chunk = next.value;
    try {
      await new Promise<void>((resolve, reject) =>
        stdin.write(chunk, (error) => (error ? reject(error) : resolve())),
      );
    } catch (error) {
      await Promise.resolve(chunks.return?.()).catch(() => undefined);
      throw error;
    }
  }
  await new Promise<void>((resolve) => stdin.end(resolve));
}

function run(command: string, args: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...args], { env: childEnvironment(), stdio: "ignore" });
    child.once("error", reject);
    child.once("close", (code) =>
      code === 0 ? resolve() : reject(new Error(`${command} exited with ${code}`)),
    );
  });
}
