import { createHash } from "node:crypto";
import { Worker } from "node:worker_threads";
import { InternalError } from "@open-managed-agents/runtime-resource-contract";
import type { StreamDigest } from "./digest-transform.js";
import { IO_CHUNK_BYTES } from "./io-sizes.js";
import { SHA256_WORKER_SOURCE } from "./sha256-worker-source.js";

/** Queue depth: buffers of IO_CHUNK_BYTES held by the hasher, in flight or being filled. */
const QUEUE_BUFFERS = 4;

/** sha256 of a byte stream, computed on a thread of its own. */
export interface StreamHasher {
  /** Queues a copy of `bytes`; they may be reused once this resolves. Waits while the queue is full. */
  update(bytes: Uint8Array): Promise<void>;
  /** The sha256 and count of everything queued; the thread ends with it. */
  finish(): Promise<StreamDigest>;
  /** Ends the thread without a digest (the pack stopped early). */
  abort(): void;
}

interface Waiter<T> {
  resolve(value: T): void;
  reject(error: unknown): void;
}

/**
 * Hashes on a worker thread so that the pack's own thread only reads, copies and frames the tar. Bytes are
 * copied into a ring of four reused 1 MiB buffers that are transferred to the thread and back, never
 * cloned; a full ring makes `update` wait, so at most 4 MiB is queued. A stream that fits one buffer is
 * hashed on the calling thread at `finish`, without starting a thread at all.
 */
export function createStreamHasher(): StreamHasher {
  let worker: Worker | null = null;
  let failure: unknown = null;
  let settled = false;
  const free: ArrayBuffer[] = [];
  const waiting: Waiter<ArrayBuffer>[] = [];
  let digestWaiter: Waiter<string> | null = null;
  let allocated = 0;
  let inFlight = 0;
  let current: Uint8Array | null = null;
  let filled = 0;
  let bytes = 0;

  const fail = (error: unknown) => {
    failure ??= error;
    for (const waiter of waiting.splice(0)) waiter.reject(failure);
    digestWaiter?.reject(failure);
    digestWaiter = null;
  };
  // Held only while a reply is awaited: an abandoned pack never keeps the process alive.
  const holdProcess = () =>
    inFlight > 0 || digestWaiter !== null ? worker?.ref() : worker?.unref();
  const start = (): Worker => {
    // No inherited flags: loaders, preloads and profilers of the host have no business in this thread.
    const thread = new Worker(SHA256_WORKER_SOURCE, { eval: true, execArgv: [] });
    thread.on("message", (message: { buffer?: ArrayBuffer; sha256?: string }) => {
      if (message.buffer instanceof ArrayBuffer) {
        inFlight -= 1;
        const waiter = waiting.shift();
        if (waiter === undefined) free.push(message.buffer);
        else waiter.resolve(message.buffer);
      } else if (typeof message.sha256 === "string") {
        settled = true;
        digestWaiter?.resolve(message.sha256);
        digestWaiter = null;
      }
      holdProcess();
    });
    thread.on("error", (cause) =>
      fail(new InternalError({ message: "the archive hashing thread failed", cause })),
    );
    thread.on("exit", (code) => {
      if (!settled)
        fail(
          new InternalError({
            message: "the archive hashing thread ended before the digest",
            context: { code },
          }),
        );
    });
    return thread;
  };
  const acquire = (): ArrayBuffer | Promise<ArrayBuffer> => {
    const reused = free.pop();
    if (reused !== undefined) return reused;
    if (allocated < QUEUE_BUFFERS) {
      allocated += 1;
      return new ArrayBuffer(IO_CHUNK_BYTES);
    }
    return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
  };
  const post = () => {
    if (current === null || filled === 0) return;
    worker ??= start();
    const { buffer } = current;
    worker.postMessage({ buffer, length: filled }, [buffer as ArrayBuffer]);
    inFlight += 1;
    current = null;
    filled = 0;
    holdProcess();
  };

  return {
    async update(view) {
      bytes += view.length;
      for (let at = 0; at < view.length; ) {
        if (failure !== null) throw failure;
        if (current === null) {
          current = new Uint8Array(await acquire());
          filled = 0;
        }
        const count = Math.min(view.length - at, current.length - filled);
        current.set(view.subarray(at, at + count), filled);
        filled += count;
        at += count;
        if (filled === current.length) post();
      }
    },
    async finish() {
      if (failure !== null) throw failure;
      if (worker === null) {
        settled = true;
        const sha256 = createHash("sha256")
          .update(current?.subarray(0, filled) ?? new Uint8Array(0))
          .digest("hex");
        return { sha256, bytes };
      }
      post();
      const thread = worker;
      const sha256 = await new Promise<string>((resolve, reject) => {
        digestWaiter = { resolve, reject };
        thread.postMessage({ end: true });
        holdProcess();
      });
      return { sha256, bytes };
    },
    abort() {
      settled = true;
      fail(new InternalError({ message: "archive hashing stopped" }));
      void worker?.terminate();
    },
  };
}
