// src/checkpoint/bridge-checkpointer.ts
import { IntegrityError as IntegrityError2, NotFoundError as NotFoundError2, SandboxFailedError as SandboxFailedError2 } from "@open-managed-agents/runtime-resource-contract";
import { inspectArchive, joinPlanCommands, splitArchive } from "@open-managed-agents/workspace-archive";

// src/runtime/files.ts
import { NotFoundError, SandboxFailedError } from "@open-managed-agents/runtime-resource-contract";

// src/runtime/exec.ts
import { LimitExceededError, TimeoutError } from "@open-managed-agents/runtime-resource-contract";
var TIMEOUT_EXIT_CODE = 124;
var CLIENT_GRACE_MS = 5e3;
function buildArgv(input) {
  const env = Object.entries(input.env ?? {}).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0).map(([key, value]) => `${key}=${value}`);
  const program = [input.command, ...input.args ?? []];
  const withEnv = env.length > 0 ? ["env", ...env, ...program] : program;
  if (!input.timeoutMs) return withEnv;
  const seconds = Math.max(1, Math.ceil(input.timeoutMs / 1e3));
  return ["timeout", "-k", "2", String(seconds), ...withEnv];
}
function deadlineSignal(timeoutMs, signal) {
  const signals = [signal, timeoutMs ? AbortSignal.timeout(timeoutMs + CLIENT_GRACE_MS) : void 0].filter(
    (candidate) => candidate !== void 0
  );
  return signals.length === 0 ? void 0 : AbortSignal.any(signals);
}
async function execCollect(client, sandboxId, input) {
  const decoders = { stdout: new TextDecoder(), stderr: new TextDecoder(), output: new TextDecoder() };
  let stdout = "";
  let stderr = "";
  let output = "";
  let size = 0;
  const signal = deadlineSignal(input.timeoutMs, input.signal);
  let exitCode = null;
  try {
    for await (const event of client.exec(sandboxId, { argv: buildArgv(input), cwd: input.cwd, timeoutMs: input.timeoutMs, signal })) {
      if (event.type === "exit") {
        exitCode = event.exitCode;
        break;
      }
      size += event.data.byteLength;
      if (size > input.maxOutputBytes) {
        throw new LimitExceededError({ message: `command output exceeds ${input.maxOutputBytes} bytes`, context: { limit: "maxOutputBytes" } });
      }
      const text = decoders[event.type].decode(event.data, { stream: true });
      if (event.type === "stdout") stdout += text;
      else stderr += text;
      output += decoders.output.decode(event.data, { stream: true });
    }
  } catch (error) {
    if (input.timeoutMs && signal?.aborted && !input.signal?.aborted) {
      throw new TimeoutError({ message: `command did not finish within ${input.timeoutMs} ms`, context: { timeoutMs: input.timeoutMs }, cause: error });
    }
    throw error;
  }
  if (input.timeoutMs && exitCode === TIMEOUT_EXIT_CODE) {
    throw new TimeoutError({ message: `command did not finish within ${input.timeoutMs} ms`, context: { timeoutMs: input.timeoutMs } });
  }
  return { exitCode: exitCode ?? -1, stdout, stderr, output };
}
function demultiplex(events) {
  let stdoutController;
  let stderrController;
  const stdout = new ReadableStream({ start: (controller) => void (stdoutController = controller) });
  const stderr = new ReadableStream({ start: (controller) => void (stderrController = controller) });
  const exitCode = (async () => {
    try {
      for await (const event of events) {
        if (event.type === "exit") {
          stdoutController.close();
          stderrController.close();
          return event.exitCode;
        }
        (event.type === "stdout" ? stdoutController : stderrController).enqueue(event.data);
      }
      throw new Error("exec events ended without exit");
    } catch (error) {
      stdoutController.error(error);
      stderrController.error(error);
      throw error;
    }
  })();
  return { stdout, stderr, exitCode };
}

// src/runtime/paths.ts
import { InvalidRequestError } from "@open-managed-agents/runtime-resource-contract";
var WORKSPACE_ROOT = "/workspace";
var OUTPUTS_ROOT = "/mnt/session/outputs";
function classifyPath(path) {
  for (const [kind, root] of [
    ["workspace", WORKSPACE_ROOT],
    ["outputs", OUTPUTS_ROOT]
  ]) {
    if (!path.startsWith(`${root}/`)) continue;
    const relative = path.slice(root.length + 1);
    const segments = relative.split("/");
    if (segments.some((segment) => segment === "" || segment === "." || segment === "..")) break;
    return { kind, relative };
  }
  throw new InvalidRequestError({
    message: "sandbox path must be a file under /workspace/ or /mnt/session/outputs/ without empty, '.' or '..' segments",
    context: { path: path.slice(0, 256) }
  });
}
function assertWorkspaceCwd(cwd) {
  if (cwd === WORKSPACE_ROOT) return;
  classifyPath(cwd.endsWith("/") ? cwd.slice(0, -1) : cwd);
  if (!cwd.startsWith(`${WORKSPACE_ROOT}/`)) {
    throw new InvalidRequestError({ message: "working directory must be /workspace or below", context: { cwd: cwd.slice(0, 256) } });
  }
}
function shellQuote(value) {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

// src/runtime/files.ts
var HELPER_OUTPUT_BYTES = 64 * 1024;
function createBridgeFiles(client, sandboxId, options) {
  const run = async (script, signal) => {
    const result = await execCollect(client, sandboxId, { command: "sh", args: ["-c", script], signal, maxOutputBytes: HELPER_OUTPUT_BYTES });
    if (result.exitCode !== 0) {
      throw new SandboxFailedError({
        message: `sandbox helper command failed with exit code ${result.exitCode}: ${result.stderr.slice(0, 300)}`,
        context: { exitCode: result.exitCode }
      });
    }
    return result.stdout;
  };
  const assertFileExists = async (path, signal) => {
    const result = await execCollect(client, sandboxId, { command: "test", args: ["-f", path], signal, maxOutputBytes: HELPER_OUTPUT_BYTES });
    if (result.exitCode !== 0) throw new NotFoundError({ message: "file does not exist in the sandbox", context: { path: path.slice(0, 256) } });
  };
  const readStream = async (path, signal) => {
    const { kind } = classifyPath(path);
    await assertFileExists(path, signal);
    if (kind === "workspace") return client.readFile(sandboxId, path, signal);
    const events = client.exec(sandboxId, { argv: ["base64", "-w", "0", path], signal });
    return base64EventsToBytes(events);
  };
  return {
    run,
    readStream,
    async readBytes(path, signal) {
      return new Uint8Array(await new Response(await readStream(path, signal)).arrayBuffer());
    },
    async writeBytes(path, content, signal) {
      const { kind } = classifyPath(path);
      const parent = path.slice(0, path.lastIndexOf("/"));
      if (content.byteLength > options.maxRequestBytes) {
        throw new SandboxFailedError({ message: `file of ${content.byteLength} bytes exceeds the bridge request limit`, context: { limit: options.maxRequestBytes } });
      }
      if (kind === "workspace") {
        await run(`mkdir -p ${shellQuote(parent)}`, signal);
        await client.writeFile(sandboxId, path, content, signal);
        return;
      }
      const staging = `/workspace/.oma-staging-${crypto.randomUUID()}`;
      await client.writeFile(sandboxId, staging, content, signal);
      await run(`mkdir -p ${shellQuote(parent)} && mv -f ${shellQuote(staging)} ${shellQuote(path)}`, signal);
    }
  };
}
function base64EventsToBytes(events) {
  let carry = "";
  return new ReadableStream({
    async pull(controller) {
      for (; ; ) {
        const next = await events.next();
        if (next.done) {
          controller.error(new SandboxFailedError({ message: "file read ended without an exit status" }));
          return;
        }
        const event = next.value;
        if (event.type === "exit") {
          if (event.exitCode !== 0) {
            controller.error(new SandboxFailedError({ message: `file read failed with exit code ${event.exitCode}`, context: { exitCode: event.exitCode } }));
            return;
          }
          if (carry) controller.enqueue(Buffer.from(carry, "base64"));
          controller.close();
          return;
        }
        if (event.type !== "stdout") continue;
        const text = carry + new TextDecoder().decode(event.data).replace(/\s+/g, "");
        const usable = text.length - text.length % 4;
        carry = text.slice(usable);
        if (usable > 0) {
          controller.enqueue(Buffer.from(text.slice(0, usable), "base64"));
          return;
        }
      }
    },
    async cancel() {
      await events.return(void 0);
    }
  });
}

// src/checkpoint/checkpoint-handle.ts
import { IntegrityError, ProviderMismatchError } from "@open-managed-agents/runtime-resource-contract";
import { z } from "zod";
var metadataSchema = z.object({
  blobKey: z.string().min(1),
  contentHash: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  size: z.number().int().nonnegative().refine(Number.isSafeInteger)
});
function createCheckpointHandle(input) {
  const contentHash = `sha256:${input.sha256}`;
  return {
    provider: input.provider,
    checkpointId: contentHash,
    sourceRuntimeId: input.sandboxId,
    kind: "filesystem",
    scope: "portable",
    metadata: { blobKey: input.blobKey, contentHash, size: input.size }
  };
}
function readCheckpointHandle(handle, expected) {
  if (handle.provider !== expected.provider) {
    throw new ProviderMismatchError({ message: "checkpoint belongs to another provider", context: { expected: expected.provider, actual: handle.provider } });
  }
  const parsed = metadataSchema.safeParse(handle.metadata ?? {});
  if (!parsed.success || handle.kind !== "filesystem" || handle.scope !== "portable" || parsed.data.contentHash !== handle.checkpointId) {
    throw new IntegrityError({ message: "bridge checkpoint handle is malformed", context: { checkpointId: handle.checkpointId.slice(0, 80) } });
  }
  if (!parsed.data.blobKey.startsWith(`${expected.keyPrefix}/`) || parsed.data.size > expected.maxBytes) {
    throw new IntegrityError({ message: "bridge checkpoint handle points outside the checkpoint store or over the size limit", context: { checkpointId: handle.checkpointId } });
  }
  return parsed.data;
}
function safeCheckpointName(name, fallback) {
  const cleaned = (name ?? "").replace(/[^A-Za-z0-9._-]/g, "-").replace(/^[.-]+/, "").slice(0, 80);
  return cleaned || fallback;
}

// src/checkpoint/spool.ts
import { createHash } from "crypto";
import { createReadStream, createWriteStream } from "fs";
import { mkdtemp, rm } from "fs/promises";
import { tmpdir } from "os";
import { join } from "path";
import { once } from "events";
import { Readable } from "stream";
import { LimitExceededError as LimitExceededError2 } from "@open-managed-agents/runtime-resource-contract";
async function createSpool(options) {
  const directory = await mkdtemp(join(options.directory ?? tmpdir(), "oma-bridge-spool-"));
  const path = join(directory, "archive.tar");
  const hash = createHash("sha256");
  const file = createWriteStream(path, { highWaterMark: 1024 * 1024 });
  let size = 0;
  let finished = null;
  const opened = new Promise((resolve, reject) => file.once("open", () => resolve()).once("error", reject));
  await opened;
  return {
    path,
    async append(stream, signal) {
      const reader = stream.getReader();
      try {
        for (; ; ) {
          if (signal?.aborted) throw signal.reason;
          const { value, done } = await reader.read();
          if (done) return;
          size += value.byteLength;
          if (size > options.maxBytes) {
            throw new LimitExceededError2({ message: `checkpoint exceeds ${options.maxBytes} bytes`, context: { limit: "maxCheckpointBytes", maxCheckpointBytes: options.maxBytes } });
          }
          hash.update(value);
          options.onBytes?.(size);
          if (!file.write(value)) await once(file, "drain");
        }
      } finally {
        await reader.cancel().catch(() => void 0);
      }
    },
    async finish() {
      if (!finished) {
        await new Promise((resolve, reject) => file.end((error) => error ? reject(error) : resolve()));
        finished = { sha256: hash.digest("hex"), size };
      }
      return finished;
    },
    read() {
      return Readable.toWeb(createReadStream(path, { highWaterMark: 1024 * 1024 }));
    },
    async dispose() {
      file.destroy();
      await rm(directory, { recursive: true, force: true });
    }
  };
}
async function hashStream(stream) {
  const hash = createHash("sha256");
  let size = 0;
  for await (const chunk of stream) {
    hash.update(chunk);
    size += chunk.byteLength;
  }
  return { sha256: hash.digest("hex"), size };
}

// src/checkpoint/bridge-checkpointer.ts
function createBridgeCheckpointer(options) {
  const { client, store } = options;
  const archiveReadOptions = { limits: { maxBytes: options.maxCheckpointBytes }, allowSymlinksOutsideRoot: true };
  const progress = (phase, sandboxId, totalBytes) => (bytes) => options.onProgress?.({ phase, sandboxId, bytes, totalBytes });
  const measureWorkspace = async (sandboxId, signal) => {
    const files = createBridgeFiles(client, sandboxId, { maxRequestBytes: options.maxRequestBytes });
    const output = await files.run("du -sb /workspace | cut -f1", signal);
    const size = Number.parseInt(output.trim(), 10);
    if (!Number.isSafeInteger(size)) throw new SandboxFailedError2({ message: "could not measure the workspace size" });
    return size;
  };
  const archiveInParts = async (sandboxId, spool, signal) => {
    const files = createBridgeFiles(client, sandboxId, { maxRequestBytes: options.maxRequestBytes });
    const directoryName = `.oma-checkpoint-${crypto.randomUUID()}`;
    const directory = `/workspace/${directoryName}`;
    const excludes = [directoryName, ...options.excludes].map((pattern) => `--exclude=${shellQuote(pattern)}`).join(" ");
    const script = [
      `mkdir -p ${directory}`,
      `{ tar -cf - -C /workspace ${excludes} .; echo $? > ${directory}/status; } | split -b ${options.partBytes} -a 6 -d - ${directory}/part-`,
      `status=$(cat ${directory}/status); [ "$status" -le 1 ] || { echo "tar failed: $status" >&2; exit 1; }`,
      `cd ${directory} && stat -c '%n %s' part-*`
    ].join(" && ");
    try {
      const listing = await files.run(script, signal);
      const parts = listing.split("\n").map((line) => /^(part-\d{6}) (\d+)$/.exec(line.trim())).filter((match) => match !== null).map(([, part = "", size2 = "0"]) => ({ part, size: Number(size2) })).sort((a, b) => a.part < b.part ? -1 : 1);
      if (parts.length === 0) throw new SandboxFailedError2({ message: "archiving the workspace produced no parts" });
      for (const { part } of parts) {
        await spool.append(await client.readFile(sandboxId, `${directory}/${part}`, signal), signal);
      }
      const expected = parts.reduce((sum, { size: size2 }) => sum + size2, 0);
      const { size } = await spool.finish();
      if (size !== expected) {
        throw new SandboxFailedError2({ message: `archive parts arrived with ${size} of ${expected} bytes`, context: { expected, received: size } });
      }
    } finally {
      await files.run(`rm -rf ${directory}`).catch(() => void 0);
    }
  };
  const storeSpool = async (sandboxId, name, spool) => {
    const { sha256, size } = await spool.finish();
    await inspectArchive(spool.read(), archiveReadOptions);
    const blobKey = `${options.keyPrefix}/${encodeURIComponent(sandboxId)}/${safeCheckpointName(name, sha256)}-${sha256}.tar`;
    const stored = await store.put(blobKey, spool.read(), {
      contentType: "application/x-tar",
      customMetadata: { sha256, runtimeId: sandboxId, size: String(size) },
      ifNoneMatch: "*",
      contentLength: size
    });
    if (stored === null) await verifyStored(blobKey, sha256, size);
    return createCheckpointHandle({ provider: options.provider, sandboxId, sha256, blobKey, size });
  };
  const verifyStored = async (blobKey, sha256, size) => {
    const existing = await store.get(blobKey);
    if (!existing) throw new IntegrityError2({ message: "checkpoint key vanished during a conditional write", context: { blobKey } });
    const digest = existing.size === size ? await hashStream(existing.stream()) : null;
    if (!digest || digest.sha256 !== sha256 || digest.size !== size) {
      throw new IntegrityError2({ message: "storage collision: an object with different content exists at the checkpoint key", context: { blobKey } });
    }
  };
  return {
    async checkpoint({ sandboxId, name, signal }) {
      const measured = await measureWorkspace(sandboxId, signal);
      const spool = await createSpool({ maxBytes: options.maxCheckpointBytes, directory: options.spoolDirectory, onBytes: progress("checkpoint", sandboxId, measured) });
      try {
        if (measured <= options.singleRequestBytes) {
          await spool.append(await client.persist(sandboxId, options.excludes, signal), signal);
        } else {
          await archiveInParts(sandboxId, spool, signal);
        }
        return await storeSpool(sandboxId, name, spool);
      } finally {
        await spool.dispose();
      }
    },
    async restore({ sandboxId, handle, signal }) {
      const metadata = readCheckpointHandle(handle, { provider: options.provider, keyPrefix: options.keyPrefix, maxBytes: options.maxCheckpointBytes });
      const object = await store.get(metadata.blobKey);
      if (!object) throw new NotFoundError2({ message: "checkpoint archive is missing from the store", context: { blobKey: metadata.blobKey } });
      if (object.size !== metadata.size) {
        await object.stream().cancel().catch(() => void 0);
        throw new IntegrityError2({ message: "checkpoint archive size does not match its handle", context: { blobKey: metadata.blobKey } });
      }
      const spool = await createSpool({ maxBytes: options.maxCheckpointBytes, directory: options.spoolDirectory });
      try {
        await spool.append(object.stream(), signal);
        const digest = await spool.finish();
        if (`sha256:${digest.sha256}` !== metadata.contentHash || digest.size !== metadata.size) {
          throw new IntegrityError2({ message: "checkpoint archive hash does not match its handle", context: { blobKey: metadata.blobKey } });
        }
        const report = progress("restore", sandboxId, digest.size);
        if (digest.size <= options.singleRequestBytes && digest.size <= options.maxRequestBytes) {
          const bytes = new Uint8Array(await new Response(spool.read()).arrayBuffer());
          await client.hydrate(sandboxId, bytes, signal);
          report(digest.size);
          return;
        }
        let sent = 0;
        const parts = splitArchive(spool.read(), { ...archiveReadOptions, maxPartBytes: Math.min(options.partBytes, options.maxRequestBytes) });
        for await (const part of parts) {
          await client.hydrate(sandboxId, part.bytes, signal);
          sent += part.size;
          report(sent);
        }
        const files = createBridgeFiles(client, sandboxId, { maxRequestBytes: options.maxRequestBytes });
        for (const plan of parts.joinPlans) await files.run(joinPlanCommands(plan, { cwd: "/workspace", verify: true }), signal);
      } finally {
        await spool.dispose();
      }
    }
  };
}

export {
  buildArgv,
  execCollect,
  demultiplex,
  WORKSPACE_ROOT,
  assertWorkspaceCwd,
  createBridgeFiles,
  createBridgeCheckpointer
};
