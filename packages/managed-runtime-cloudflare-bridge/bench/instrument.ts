import type { BlobStore } from "@open-managed-agents/blob-store";
import type { BridgeClient } from "../src/wire/bridge-client.js";

/** One timed step of a driver operation, in milliseconds since the recorder started. */
export interface Span {
  readonly step: string;
  readonly start: number;
  readonly end: number;
  readonly bytes: number;
}

/** Collects the steps the driver takes, as seen through its bridge client and blob store. */
export interface StepRecorder {
  readonly spans: Span[];
  now(): number;
  record(step: string, start: number, bytes?: number): void;
  /** Forgets every span and starts the clock again (call right before the measured operation). */
  restart(): void;
}

export function createStepRecorder(): StepRecorder {
  let origin = performance.now();
  const spans: Span[] = [];
  const now = () => performance.now() - origin;
  return {
    spans,
    now,
    record: (step, start, bytes = 0) => void spans.push({ step, start, end: now(), bytes }),
    restart() {
      spans.length = 0;
      origin = performance.now();
    },
  };
}

/** Names a helper command the driver runs in the sandbox after what it does. */
export function execStep(argv: readonly string[]): string {
  const script = argv.join(" ");
  // Snapshot scripts: `sh -c <script> <name> <mode> ...`.
  if (argv[0] === "sh" && argv[1] === "-c" && argv[3] === "capture.sh") {
    const modes: Record<string, string> = {
      list: "sandbox: list, compare with the cache, hash changes",
      bundle: "sandbox: archive needed contents",
      commit: "sandbox: keep listing cache, remove scratch",
      clean: "sandbox: remove scratch",
    };
    return modes[argv[4] ?? ""] ?? "sandbox: other exec";
  }
  if (argv[0] === "sh" && argv[1] === "-c" && argv[3] === "restore.sh" && argv[4] === "prepare") {
    return "sandbox: restore scratch folder, tools";
  }
  if (script.includes("du -sb")) return "sandbox: measure (du)";
  if (script.includes(" restore.sh restore "))
    return "sandbox: extract parts as they arrive, prove the tree [+ listing cache]";
  if (script.includes(" restore.sh extract "))
    return "sandbox: extract restore parts as they arrive (PUTs overlap)";
  if (script.includes(" restore.sh verify "))
    return "sandbox: prove the tree after a hydrate [+ listing cache]";
  if (script.includes(".oma-restore-") && script.includes("command -v"))
    return "sandbox: restore scratch folder, tools";
  if (script.includes("split -b") && script.includes("xargs -0 -r cat"))
    return "sandbox: cat contents [| zstd/gzip] | split (part GETs overlap)";
  if (script.includes("split -b") && script.includes("--verbatim-files-from"))
    return "sandbox: tar listed entries [| zstd/gzip] | split (part GETs overlap)";
  if (script.includes("split -b")) return "sandbox: tar | split (part GETs overlap)";
  if (script.includes("sha256sum -z")) return "sandbox: manifest (find + sha256sum)";
  if (script.includes("-fprintf") && script.includes("/special"))
    return "sandbox: list and sort entries, choose codec";
  if (script.includes(".oma-seed-")) return "sandbox: listing cache after restore";
  if (script.includes("mv ") && script.includes(".oma-manifest-cache/records"))
    return "sandbox: keep listing cache, remove scratch";
  if (script.includes("sort -z")) return "sandbox: manifest hash cache update";
  if (script.includes("gzip -1 <")) return "sandbox: compression sample";
  if (script.startsWith("sh -c mkdir -p") && script.includes(".oma-checkpoint-"))
    return script.includes("command -v zstd")
      ? "sandbox: scratch folder + codec check"
      : "sandbox: scratch folder";
  if (script.includes("command -v zstd")) return "sandbox: codec check";
  if (script.includes("rm -f part-")) return "sandbox: remove fetched parts";
  if (script.includes("rm -rf") && script.includes(".oma-manifest-"))
    return "sandbox: remove manifest listing";
  if (argv[0] === "test" || script.includes(" test -f ")) return "sandbox: part exists check";
  if (script.includes("rm -rf") && script.includes(".oma-checkpoint-"))
    return "sandbox: remove parts";
  if (argv[0] === "touch" && script.includes(".oma-runtime-")) return "sandbox: runtime marker";
  return "sandbox: other exec";
}

/**
 * {@link timedStream} for a store body, keeping what kind of stream it is: a byte stream stays one, its BYOB
 * reads passed on with the reader's own buffer, so the driver reads it as it would unobserved (a plain
 * pass-through would hand it a fresh chunk per read instead).
 */
function timedBody(
  stream: ReadableStream<Uint8Array>,
  onEnd: (bytes: number) => void,
): ReadableStream<Uint8Array> {
  let reader: ReadableStreamBYOBReader;
  try {
    reader = stream.getReader({ mode: "byob" });
  } catch {
    return timedStream(stream, onEnd);
  }
  let bytes = 0;
  return new ReadableStream({
    type: "bytes",
    // Default reads get chunks of this size, as the store's own byte streams give them.
    autoAllocateChunkSize: 256 * 1024,
    async pull(controller) {
      const request = controller.byobRequest as ReadableStreamBYOBRequest;
      const view = request.view as Uint8Array;
      const { done, value } = await reader.read(
        new Uint8Array(view.buffer, view.byteOffset, view.byteLength),
      );
      bytes += value?.byteLength ?? 0;
      if (done) {
        onEnd(bytes);
        controller.close();
      }
      request.respondWithNewView(value ?? new Uint8Array(0));
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

/** Ends a span when the consumer has read the stream to its end; a dropped stream records nothing. */
function timedStream(
  stream: ReadableStream<Uint8Array>,
  onEnd: (bytes: number) => void,
): ReadableStream<Uint8Array> {
  let bytes = 0;
  return stream.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        bytes += chunk.byteLength;
        controller.enqueue(chunk);
      },
      flush: () => onEnd(bytes),
    }),
  );
}

/** Wraps a bridge client so every call the driver makes becomes a span; behaviour is unchanged. */
export function instrumentClient(client: BridgeClient, recorder: StepRecorder): BridgeClient {
  return {
    ...client,
    async *exec(id, input) {
      const start = recorder.now();
      try {
        yield* client.exec(id, input);
      } finally {
        recorder.record(execStep(input.argv), start);
      }
    },
    async readFile(id, path, signal) {
      const start = recorder.now();
      const stream = await client.readFile(id, path, signal);
      const step = path.includes("/part-")
        ? "bridge: part GET (+ driver consume)"
        : "bridge: file GET (+ spool, hash)";
      return timedStream(stream, (bytes) => recorder.record(step, start, bytes));
    },
    async persist(id, excludes, signal) {
      const start = recorder.now();
      const stream = await client.persist(id, excludes, signal);
      return timedStream(stream, (bytes) =>
        recorder.record("bridge: /persist (+ spool, hash)", start, bytes),
      );
    },
    async writeFile(id, path, body, signal) {
      const start = recorder.now();
      await client.writeFile(id, path, body, signal);
      recorder.record(
        path.includes("/part-") ? "bridge: part PUT" : "bridge: file PUT",
        start,
        body.byteLength,
      );
    },
    async hydrate(id, tar, signal) {
      const start = recorder.now();
      await client.hydrate(id, tar, signal);
      recorder.record("bridge: /hydrate", start, tar.byteLength);
    },
    async create(signal) {
      const start = recorder.now();
      const id = await client.create(signal);
      recorder.record("bridge: create sandbox", start);
      return id;
    },
    async running(id, signal) {
      const start = recorder.now();
      const running = await client.running(id, signal);
      recorder.record("bridge: running", start);
      return running;
    },
  };
}

/** `store` whose read bodies are what `wrap` makes of each: it is given the object's own `stream` to open. */
export function wrapStoreBodies(
  store: BlobStore,
  wrap: (open: () => ReadableStream<Uint8Array>) => ReadableStream<Uint8Array>,
): BlobStore {
  return {
    ...store,
    async get(key) {
      const object = await store.get(key);
      if (!object) return object;
      return { ...object, stream: () => wrap(() => object.stream()) };
    },
  };
}

/** Wraps a blob store so puts and reads become spans. */
export function instrumentStore(store: BlobStore, recorder: StepRecorder): BlobStore {
  const timed = wrapStoreBodies(store, (open) => {
    const start = recorder.now();
    return timedBody(open(), (bytes) =>
      recorder.record("store: get (+ spool, hash)", start, bytes),
    );
  });
  return {
    ...timed,
    async put(key, body, options) {
      const start = recorder.now();
      const stored = await store.put(key, body, options);
      recorder.record("store: put (reads spool)", start, options?.contentLength ?? 0);
      return stored;
    },
  };
}

/** Totals per step, plus the time between spans: work the driver does locally (inspect, split, waits). */
export function summarizeSpans(
  spans: readonly Span[],
  totalMs: number,
): { step: string; ms: number; count: number; bytes: number }[] {
  const steps = new Map<string, { ms: number; count: number; bytes: number }>();
  const add = (step: string, ms: number, bytes: number) => {
    const entry = steps.get(step) ?? { ms: 0, count: 0, bytes: 0 };
    entry.ms += ms;
    entry.count += 1;
    entry.bytes += bytes;
    steps.set(step, entry);
  };
  const ordered = [...spans].sort((a, b) => a.start - b.start);
  let cursor = 0;
  for (const span of ordered) {
    // A gap before a span is local work that produced its input (or consumed the previous output).
    if (span.start > cursor + 1)
      add(`driver-local before ${span.step.replace(/ \(.*\)$/, "")}`, span.start - cursor, 0);
    add(span.step, span.end - span.start, span.bytes);
    cursor = Math.max(cursor, span.end);
  }
  if (totalMs > cursor + 1) add("driver-local after last call", totalMs - cursor, 0);
  return [...steps.entries()].map(([step, entry]) => ({ step, ...entry }));
}
