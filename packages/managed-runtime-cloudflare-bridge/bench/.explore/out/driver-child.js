import {
  RESULT_PREFIX
} from "./chunk-LTU2EGYZ.js";
import {
  WORKSPACE_ROOT,
  assertWorkspaceCwd,
  buildArgv,
  createBridgeCheckpointer,
  createBridgeFiles,
  demultiplex,
  execCollect
} from "./chunk-6I3QRRF2.js";
import {
  BRIDGE_SANDBOX_ID_PATTERN,
  createBridgeClient
} from "./chunk-WEIRAH7Z.js";

// bench/driver-child.ts
import { createFsBlobStore } from "@open-managed-agents/blob-store/fs";

// src/driver.ts
import { createProviderManagedRuntimeDriver } from "@open-managed-agents/managed-runtime-sandbox";

// src/options.ts
import { parseRecord } from "@open-managed-agents/runtime-resource-contract";
import { z } from "zod";
var MIB = 1024 * 1024;
var keyPrefix = z.string().min(1).refine((value) => !value.startsWith("/") && !value.endsWith("/"), "must not start or end with '/'").refine((value) => value.split("/").every((segment) => segment !== "" && segment !== "." && segment !== ".."), "must not contain empty, '.' or '..' segments");
var positiveSafeInteger = z.number().int().positive().refine(Number.isSafeInteger, "must be a positive safe integer");
var isFunction = (value) => typeof value === "function";
var isBlobStore = (value) => typeof value === "object" && value !== null && ["put", "get", "head", "delete", "list"].every((method) => isFunction(value[method]));
var optionsSchema = z.object({
  baseUrl: z.url({ protocol: /^https?$/ }),
  apiKey: z.string().min(1, "must not be empty"),
  checkpointStore: z.custom(isBlobStore, "must be a BlobStore"),
  checkpointKeyPrefix: keyPrefix.default("cloudflare-bridge-workspaces"),
  checkpointExcludes: z.array(z.string().min(1)).default([]),
  maxHydrateBytes: positiveSafeInteger.default(32 * MIB),
  singleRequestBytes: positiveSafeInteger.default(16 * MIB),
  partBytes: positiveSafeInteger.min(64 * 1024, "must be at least 64 KiB").default(8 * MIB),
  maxCheckpointBytes: positiveSafeInteger.default(10 * 1024 * MIB),
  fetch: z.custom(isFunction, "must be a function").optional(),
  leaseTtlMs: positiveSafeInteger.default(9e4),
  outputStore: z.custom(isBlobStore, "must be a BlobStore").nullable().default(null),
  outputKeyPrefix: keyPrefix.default("cloudflare-bridge-output-candidates"),
  readiness: z.object({ command: z.string().min(1).optional(), timeoutMs: positiveSafeInteger.optional() }).optional(),
  retry: z.object({ attempts: positiveSafeInteger, baseDelayMs: z.number().int().nonnegative(), maxDelayMs: z.number().int().nonnegative() }).optional(),
  maxExecOutputBytes: positiveSafeInteger.default(16 * MIB),
  spoolDirectory: z.string().min(1).optional(),
  onProgress: z.custom(isFunction, "must be a function").optional()
}).strict().refine((options) => options.partBytes <= options.maxHydrateBytes, { message: "must not exceed maxHydrateBytes", path: ["partBytes"] });
function resolveBridgeOptions(options) {
  return parseRecord(optionsSchema, options, { record: "cloudflare-bridge options", code: "invalid_config" });
}

// src/runtime/bridge-provider.ts
import { InvalidRequestError, ProviderMismatchError as ProviderMismatchError2, UnsupportedOperationError as UnsupportedOperationError2 } from "@open-managed-agents/runtime-resource-contract";

// src/runtime/bridge-runtime.ts
import {
  CapabilityUnsupportedError,
  LeaseLostError,
  ProviderMismatchError,
  SandboxFailedError,
  UnsupportedOperationError
} from "@open-managed-agents/runtime-resource-contract";
function runtimeMarkerPath(sandboxId) {
  return `/tmp/.oma-runtime-${sandboxId}`;
}
async function markRuntimeStarted(client, sandboxId, signal) {
  const result = await execCollect(client, sandboxId, { command: "touch", args: [runtimeMarkerPath(sandboxId)], signal, maxOutputBytes: 4096 });
  if (result.exitCode !== 0) {
    throw new SandboxFailedError({ message: `could not initialise the bridge sandbox (exit ${result.exitCode})`, context: { exitCode: result.exitCode } });
  }
}
function createBridgeRuntime(options) {
  const { client, sandboxId, provider } = options;
  const files = createBridgeFiles(client, sandboxId, { maxRequestBytes: options.maxRequestBytes });
  return {
    runtimeHandle: () => ({ provider, runtimeId: sandboxId }),
    runtimeCapabilities: () => ({ lease: false, suspend: [], checkpoint: ["filesystem"] }),
    async status() {
      return await client.running(sandboxId) ? "running" : "stopped";
    },
    async renewLease() {
      const probe = await execCollect(client, sandboxId, { command: "test", args: ["-f", runtimeMarkerPath(sandboxId)], maxOutputBytes: 4096 });
      if (probe.exitCode !== 0) {
        throw new LeaseLostError({ message: "bridge sandbox was stopped or replaced; its files are gone", context: { runtimeId: sandboxId } });
      }
    },
    async suspend() {
      throw new UnsupportedOperationError({ message: "the Cloudflare Sandbox Bridge cannot suspend a sandbox", context: { provider } });
    },
    async resume(handle, resumeOptions) {
      if (handle.provider !== provider) {
        throw new ProviderMismatchError({ message: "checkpoint belongs to another provider", context: { expected: provider, actual: handle.provider } });
      }
      await options.checkpointer.restore({ sandboxId, handle, signal: resumeOptions?.signal });
    },
    checkpoint({ kind, name, signal }) {
      if (kind !== "filesystem") {
        return Promise.reject(new UnsupportedOperationError({ message: "the bridge checkpoints the filesystem only", context: { kind } }));
      }
      return options.checkpointer.checkpoint({ sandboxId, name, signal });
    },
    destroy: () => client.destroy(sandboxId),
    async exec(command, execOptions = {}) {
      const cwd = execOptions.cwd ?? WORKSPACE_ROOT;
      assertWorkspaceCwd(cwd);
      return execCollect(client, sandboxId, {
        command: "sh",
        args: ["-c", command],
        env: execOptions.env,
        cwd,
        timeoutMs: execOptions.timeoutMs,
        signal: execOptions.signal,
        maxOutputBytes: options.maxExecOutputBytes
      });
    },
    async readFile(path) {
      return new TextDecoder().decode(await files.readBytes(path));
    },
    async writeFile(path, content) {
      await files.writeBytes(path, new TextEncoder().encode(content));
    },
    readFileBytes: (path) => files.readBytes(path),
    writeFileBytes: (path, content) => files.writeBytes(path, content),
    readFileStream: (path) => files.readStream(path),
    async spawnDuplexProcess(spec) {
      const cwd = spec.cwd ?? WORKSPACE_ROOT;
      assertWorkspaceCwd(cwd);
      const controller = new AbortController();
      const pidFile = `/tmp/oma-process-${crypto.randomUUID()}.pid`;
      const argv = ["sh", "-c", 'echo $$ > "$0"; exec "$@"', pidFile, ...buildArgv({ command: spec.command, args: spec.args, env: spec.env })];
      const events = client.exec(sandboxId, { argv, cwd, signal: controller.signal });
      const { stdout, stderr, exitCode } = demultiplex(events);
      let killedWith = null;
      const exited = exitCode.then(
        (code) => ({ code, signal: null }),
        (error) => {
          if (killedWith) return { code: null, signal: killedWith };
          throw error;
        }
      );
      exited.catch(() => void 0);
      const stdin = new WritableStream({
        write() {
          throw new CapabilityUnsupportedError({
            message: "the Cloudflare Sandbox Bridge carries no stdin for exec (interactive_stdin_without_pty); use the PTY route",
            context: { capability: "interactive_stdin_without_pty" }
          });
        }
      });
      return {
        stdin,
        stdout,
        stderr,
        exited,
        kill(signal = "SIGTERM") {
          if (killedWith) return;
          killedWith = signal;
          const name = signal === "SIGKILL" ? "KILL" : "TERM";
          void files.run(`kill -s ${name} "$(cat ${pidFile})" 2>/dev/null; rm -f ${pidFile}`).catch(() => void 0).finally(() => controller.abort());
        }
      };
    }
  };
}

// src/runtime/bridge-provider.ts
function createBridgeSandboxProvider(options) {
  const runtimeFor = (sandboxId) => createBridgeRuntime({
    provider: options.provider,
    client: options.client,
    sandboxId,
    checkpointer: options.checkpointer,
    maxRequestBytes: options.maxRequestBytes,
    maxExecOutputBytes: options.maxExecOutputBytes
  });
  const start = async () => {
    const sandboxId = await options.client.create();
    const runtime = runtimeFor(sandboxId);
    try {
      await markRuntimeStarted(options.client, sandboxId);
      return runtime;
    } catch (error) {
      await runtime.destroy().catch(() => void 0);
      throw error;
    }
  };
  return {
    provider: options.provider,
    async create() {
      return start();
    },
    async resume(handle) {
      if (handle.provider !== options.provider) {
        throw new ProviderMismatchError2({ message: "handle belongs to another provider", context: { expected: options.provider, actual: handle.provider } });
      }
      throw new UnsupportedOperationError2({ message: "the Cloudflare Sandbox Bridge cannot retain a runtime; restore a portable checkpoint instead", context: { provider: options.provider } });
    },
    async restore(checkpoint) {
      if (checkpoint.provider !== options.provider) {
        throw new ProviderMismatchError2({ message: "checkpoint belongs to another provider", context: { expected: options.provider, actual: checkpoint.provider } });
      }
      const runtime = await start();
      try {
        await runtime.resume(checkpoint);
        return runtime;
      } catch (error) {
        await runtime.destroy().catch(() => void 0);
        throw error;
      }
    },
    async connect(runtimeId) {
      if (!BRIDGE_SANDBOX_ID_PATTERN.test(runtimeId)) {
        throw new InvalidRequestError({ message: "runtime id is not a bridge sandbox id", context: { provider: options.provider } });
      }
      return runtimeFor(runtimeId);
    }
  };
}

// src/driver.ts
var CLOUDFLARE_BRIDGE_PROVIDER = "cloudflare-bridge";

// bench/instrument.ts
function createStepRecorder() {
  let origin = performance.now();
  const spans = [];
  const now = () => performance.now() - origin;
  return {
    spans,
    now,
    record: (step, start, bytes = 0) => void spans.push({ step, start, end: now(), bytes }),
    restart() {
      spans.length = 0;
      origin = performance.now();
    }
  };
}
function execStep(argv) {
  const script = argv.join(" ");
  if (script.includes("du -sb")) return "sandbox: measure (du)";
  if (script.includes("split -b")) return "sandbox: tar | split";
  if (argv[0] === "test" || script.includes(" test -f ")) return "sandbox: part exists check";
  if (script.includes("rm -rf") && script.includes(".oma-checkpoint-")) return "sandbox: remove parts";
  if (script.includes("sha256sum -c")) return "sandbox: join chunks";
  return "sandbox: other exec";
}
function timedStream(stream, onEnd) {
  let bytes = 0;
  return stream.pipeThrough(
    new TransformStream({
      transform(chunk, controller) {
        bytes += chunk.byteLength;
        controller.enqueue(chunk);
      },
      flush: () => onEnd(bytes)
    })
  );
}
function instrumentClient(client, recorder) {
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
      return timedStream(stream, (bytes) => recorder.record("bridge: file GET (+ spool, hash)", start, bytes));
    },
    async persist(id, excludes, signal) {
      const start = recorder.now();
      const stream = await client.persist(id, excludes, signal);
      return timedStream(stream, (bytes) => recorder.record("bridge: /persist (+ spool, hash)", start, bytes));
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
    }
  };
}
function instrumentStore(store, recorder) {
  return {
    ...store,
    async put(key, body, options) {
      const start = recorder.now();
      const stored = await store.put(key, body, options);
      recorder.record("store: put (reads spool)", start, options?.contentLength ?? 0);
      return stored;
    },
    async get(key) {
      const object = await store.get(key);
      if (!object) return object;
      return {
        ...object,
        stream: () => {
          const start = recorder.now();
          return timedStream(object.stream(), (bytes) => recorder.record("store: get (+ spool, hash)", start, bytes));
        }
      };
    }
  };
}
function summarizeSpans(spans, totalMs) {
  const steps = /* @__PURE__ */ new Map();
  const add = (step, ms, bytes) => {
    const entry = steps.get(step) ?? { ms: 0, count: 0, bytes: 0 };
    entry.ms += ms;
    entry.count += 1;
    entry.bytes += bytes;
    steps.set(step, entry);
  };
  const ordered = [...spans].sort((a, b) => a.start - b.start);
  let cursor = 0;
  for (const span of ordered) {
    if (span.start > cursor + 1) add(`driver-local before ${span.step.replace(/ \(.*\)$/, "")}`, span.start - cursor, 0);
    add(span.step, span.end - span.start, span.bytes);
    cursor = Math.max(cursor, span.end);
  }
  if (totalMs > cursor + 1) add("driver-local after last call", totalMs - cursor, 0);
  return [...steps.entries()].map(([step, entry]) => ({ step, ...entry }));
}

// bench/driver-child.ts
var KIB = 1024;
function requiredEnv(name) {
  const value = process.env[name];
  if (!value) throw new Error(`driver child: ${name} is not set`);
  return value;
}
async function main() {
  const [mode = "idle", argument = ""] = process.argv.slice(2);
  const recorder = createStepRecorder();
  const store = instrumentStore(createFsBlobStore({ rootDir: requiredEnv("OMA_BENCH_STORE_DIR") }), recorder);
  const spoolDirectory = process.env.OMA_BENCH_SPOOL_DIR;
  const resolved = resolveBridgeOptions({
    baseUrl: requiredEnv("OMA_BENCH_BRIDGE_URL"),
    apiKey: requiredEnv("OMA_BENCH_BRIDGE_API_KEY"),
    checkpointStore: store,
    ...spoolDirectory ? { spoolDirectory } : {}
  });
  const client = instrumentClient(createBridgeClient({ baseUrl: resolved.baseUrl, apiKey: resolved.apiKey, retry: resolved.retry }), recorder);
  const checkpointer = createBridgeCheckpointer({
    provider: CLOUDFLARE_BRIDGE_PROVIDER,
    client,
    store: resolved.checkpointStore,
    keyPrefix: resolved.checkpointKeyPrefix,
    excludes: resolved.checkpointExcludes,
    maxRequestBytes: resolved.maxHydrateBytes,
    singleRequestBytes: Math.min(resolved.singleRequestBytes, resolved.maxHydrateBytes),
    partBytes: resolved.partBytes,
    maxCheckpointBytes: resolved.maxCheckpointBytes,
    spoolDirectory: resolved.spoolDirectory
  });
  const provider = createBridgeSandboxProvider({
    provider: CLOUDFLARE_BRIDGE_PROVIDER,
    client,
    checkpointer,
    maxRequestBytes: resolved.maxHydrateBytes,
    maxExecOutputBytes: resolved.maxExecOutputBytes
  });
  const context = { sessionId: "bench", workdir: "/workspace" };
  const rssAtStartBytes = process.memoryUsage().rss;
  recorder.restart();
  let output = {};
  if (mode === "checkpoint") {
    const runtime = await provider.connect(argument, context);
    const handle = await runtime.checkpoint({ kind: "filesystem", name: "bench" });
    output = { handle };
  } else if (mode === "restore") {
    const runtime = await provider.restore(JSON.parse(argument), context);
    output = { runtimeId: runtime.runtimeHandle().runtimeId };
  } else if (mode !== "idle") {
    throw new Error(`driver child: unknown mode ${mode}`);
  }
  const elapsedMs = recorder.now();
  const result = {
    mode,
    elapsedMs,
    steps: summarizeSpans(recorder.spans, elapsedMs),
    rssAtStartBytes,
    peakRssBytes: process.resourceUsage().maxRSS * KIB,
    ...output
  };
  process.stdout.write(`${RESULT_PREFIX}${JSON.stringify(result)}
`);
}
main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`driver child failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}
`);
    process.exit(1);
  }
);
