import { existsSync } from "node:fs";
import { readdir, mkdtemp, rm, stat, writeFile as writeHostFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  ManagedRuntimeError,
  type SandboxCheckpointHandle,
} from "@open-managed-agents/runtime-resource-contract";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  type LocalSubprocessRuntime,
  type LocalSubprocessSandboxProvider,
  createLocalSubprocessSandboxProvider,
  sandboxFactory,
} from "../src/local-subprocess/index.js";
import {
  supportsBytesFileIO,
  supportsDestroy,
  supportsDuplexProcess,
  supportsSandboxRuntime,
} from "@open-managed-agents/sandbox";

const context = { sessionId: "session-1", workdir: "/workspace" };
let rootDir: string;
let provider: LocalSubprocessSandboxProvider;
const created: LocalSubprocessRuntime[] = [];

beforeAll(async () => {
  rootDir = await mkdtemp(join(tmpdir(), "local-subprocess-test-"));
  provider = createLocalSubprocessSandboxProvider({ rootDir });
});

afterEach(async () => {
  await Promise.all(created.splice(0).map((runtime) => runtime.destroy()));
});

afterAll(async () => {
  await rm(rootDir, { recursive: true, force: true });
});

async function newRuntime(): Promise<LocalSubprocessRuntime> {
  const runtime = await provider.create(context);
  created.push(runtime);
  return runtime;
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  if (!ManagedRuntimeError.isInstance(error))
    throw new Error(`expected a typed error, got ${String(error)}`);
  return error.code;
}

describe("local-subprocess provider", () => {
  it("loads confined outside NODE_ENV=test, and refuses unconfined there: those commands are the host's own", async () => {
    const previous = process.env.NODE_ENV;
    process.env.NODE_ENV = "production";
    try {
      expect(() =>
        createLocalSubprocessSandboxProvider({ rootDir, confinement: "unconfined-unsafe" }),
      ).toThrow(/loads only when NODE_ENV=test/);
      expect(() =>
        createLocalSubprocessSandboxProvider({ rootDir, confinement: "unconfined-unsafe" }),
      ).toThrow(
        expect.objectContaining({
          code: "invalid_config",
          context: expect.objectContaining({ field: "confinement" }),
        }),
      );
      const confined = createLocalSubprocessSandboxProvider({ rootDir });
      const runtime = await confined.create({ sessionId: "ses-production", workdir: "/workspace" });
      try {
        const result = await runtime.exec(
          "touch /etc/oma-production-probe 2>/dev/null; test -e /etc/oma-production-probe && echo written; echo done",
        );
        expect(result.stdout).toContain("done");
        expect(existsSync("/etc/oma-production-probe")).toBe(false);
      } finally {
        await runtime.destroy();
      }
    } finally {
      process.env.NODE_ENV = previous;
    }
  });

  it("rejects bad options naming the field", () => {
    expect(() => createLocalSubprocessSandboxProvider({ provider: "" })).toThrow(
      expect.objectContaining({
        code: "invalid_config",
        context: expect.objectContaining({ path: "provider" }),
      }),
    );
    expect(() => createLocalSubprocessSandboxProvider({ defaultTimeoutMs: -1 })).toThrow(
      expect.objectContaining({
        code: "invalid_config",
        context: expect.objectContaining({ path: "defaultTimeoutMs" }),
      }),
    );
  });

  it("carries a configured provider id in its handles and refuses another provider's", async () => {
    const acme = createLocalSubprocessSandboxProvider({ rootDir, provider: "acme-dev" });
    const runtime = await acme.create(context);
    created.push(runtime);
    expect(runtime.runtimeHandle()).toEqual({
      provider: "acme-dev",
      runtimeId: expect.stringMatching(/^local-/),
    });
    const handle = await runtime.checkpoint({ kind: "filesystem" });
    expect(handle.provider).toBe("acme-dev");
    expect(await codeOf(provider.restore(handle, context))).toBe("provider_mismatch");
    const copy = await acme.restore(handle, context);
    created.push(copy);
    expect(copy.runtimeHandle().provider).toBe("acme-dev");
  });

  it("offers the full managed runtime surface", async () => {
    const runtime = await newRuntime();
    expect(
      supportsSandboxRuntime(runtime) &&
        supportsDuplexProcess(runtime) &&
        supportsBytesFileIO(runtime) &&
        supportsDestroy(runtime),
    ).toBe(true);
    expect(runtime.runtimeHandle()).toEqual({
      provider: "local-subprocess",
      runtimeId: expect.stringMatching(/^local-/),
    });
    expect(runtime.runtimeCapabilities()).toEqual({
      lease: true,
      suspend: [],
      checkpoint: ["filesystem"],
    });
  });
});

describe("exec", () => {
  it("returns exit code, stdout, stderr and interleaved output; a non-zero exit is a result", async () => {
    const runtime = await newRuntime();
    const result = await runtime.exec(
      "echo one; sleep 0.05; echo two >&2; sleep 0.05; echo three; exit 3",
    );
    expect(result).toEqual({
      exitCode: 3,
      stdout: "one\nthree\n",
      stderr: "two\n",
      output: "one\ntwo\nthree\n",
    });
  });

  it("runs in the workdir with per-call and persistent environment", async () => {
    const runtime = await newRuntime();
    await runtime.setEnvVars({ GREETING: "hello" });
    await runtime.writeFile("/workspace/marker.txt", "present");
    const result = await runtime.exec('cat marker.txt; printf " %s %s" "$GREETING" "$EXTRA"', {
      env: { EXTRA: "world" },
    });
    expect(result.stdout).toBe("present hello world");
  });

  it("enforces its own deadline with a timeout error and kills the command", async () => {
    const runtime = await newRuntime();
    const started = Date.now();
    expect(
      await codeOf(runtime.exec("sleep 30; echo late > /workspace/late.txt", { timeoutMs: 200 })),
    ).toBe("timeout");
    expect(Date.now() - started).toBeLessThan(10_000);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await codeOf(runtime.readFile("/workspace/late.txt"))).toBe("not_found");
  });

  it("throws aborted when the caller aborts", async () => {
    const runtime = await newRuntime();
    const controller = new AbortController();
    const pending = runtime.exec("sleep 30", { signal: controller.signal });
    controller.abort();
    expect(await codeOf(pending)).toBe("aborted");
  });

  it("fails with limit_exceeded when output passes the cap", async () => {
    const small = createLocalSubprocessSandboxProvider({ rootDir, maxOutputBytes: 1024 });
    const runtime = await small.create(context);
    created.push(runtime);
    expect(await codeOf(runtime.exec("head -c 100000 /dev/zero"))).toBe("limit_exceeded");
  });
});

describe("files", () => {
  it("round-trips text, bytes and streams, creating parent directories", async () => {
    const runtime = await newRuntime();
    await runtime.writeFile("/workspace/a/b/c.txt", "héllo");
    expect(await runtime.readFile("a/b/c.txt")).toBe("héllo");
    const bytes = new Uint8Array([0, 255, 1, 254]);
    await runtime.writeFileBytes("/workspace/bin.dat", bytes);
    expect([...(await runtime.readFileBytes("/workspace/bin.dat"))]).toEqual([...bytes]);
    const streamed = new Uint8Array(
      await new Response(await runtime.readFileStream("/workspace/bin.dat")).arrayBuffer(),
    );
    expect([...streamed]).toEqual([...bytes]);
    expect((await runtime.exec("cat /workspace/a/b/c.txt")).stdout).toBe("héllo");
  });

  it("throws not_found for missing files and refuses paths outside the mounts", async () => {
    const runtime = await newRuntime();
    expect(await codeOf(runtime.readFile("/workspace/missing.txt"))).toBe("not_found");
    expect(await codeOf(runtime.readFileBytes("/workspace/missing.bin"))).toBe("not_found");
    expect(await codeOf(runtime.readFileStream("/workspace/missing.bin"))).toBe("not_found");
    expect(await codeOf(runtime.writeFile("/etc/openma-should-not-exist", "x"))).toBe(
      "invalid_request",
    );
    expect(await codeOf(runtime.readFile("/workspace/../etc/hostname"))).toBe("invalid_request");
  });

  it("mounts session outputs", async () => {
    const runtime = await newRuntime();
    await runtime.exec("echo result > /mnt/session/outputs/report.txt");
    expect(await runtime.readFile("/mnt/session/outputs/report.txt")).toBe("result\n");
  });
});

describe("duplex process", () => {
  it("carries stdin bytes to stdout and reports the exit", async () => {
    const runtime = await newRuntime();
    const process = await runtime.spawnDuplexProcess({ command: "cat" });
    const writer = process.stdin.getWriter();
    await writer.write(new TextEncoder().encode("ping\n"));
    await writer.write(new Uint8Array([0, 200]));
    await writer.close();
    const output = new Uint8Array(await new Response(process.stdout).arrayBuffer());
    expect([...output]).toEqual([...new TextEncoder().encode("ping\n"), 0, 200]);
    expect(await process.exited).toEqual({ code: 0, signal: null });
  });

  it("is killed by destroy", async () => {
    const runtime = await provider.create(context);
    const process = await runtime.spawnDuplexProcess({ command: "sleep", args: ["30"] });
    await runtime.destroy();
    expect((await process.exited).signal).toBe("SIGKILL");
  });
});

describe("lifecycle", () => {
  it("destroy is idempotent, deletes the runtime directory and loses the lease", async () => {
    const runtime = await provider.create(context);
    const runtimeDir = join(rootDir, "runtimes", runtime.runtimeHandle().runtimeId);
    expect(await runtime.status()).toBe("running");
    await runtime.renewLease({ ttlMs: 1000 });
    await runtime.destroy();
    await runtime.destroy();
    expect(await stat(runtimeDir).catch(() => null)).toBeNull();
    expect(await runtime.status()).toBe("stopped");
    expect(await codeOf(runtime.renewLease({ ttlMs: 1000 }))).toBe("lease_lost");
    expect(await codeOf(runtime.exec("true"))).toBe("not_found");
  });

  it("connect reaches an existing runtime by id and reaps a gone one without error", async () => {
    const runtime = await newRuntime();
    await runtime.writeFile("/workspace/x.txt", "shared");
    const connected = await provider.connect(runtime.runtimeHandle().runtimeId, context);
    expect(await connected.readFile("/workspace/x.txt")).toBe("shared");
    await connected.destroy();
    expect(await runtime.status()).toBe("stopped");
    const gone = await provider.connect("local-00000000-0000-0000-0000-000000000000", context);
    expect(await gone.status()).toBe("stopped");
    await gone.destroy();
    expect(await codeOf(provider.connect("../../etc", context))).toBe("invalid_request");
  });

  it("suspend and memory checkpoints are unsupported", async () => {
    const runtime = await newRuntime();
    expect(await codeOf(runtime.suspend({ kind: "filesystem" }))).toBe("unsupported_operation");
    expect(await codeOf(runtime.checkpoint({ kind: "memory" }))).toBe("unsupported_operation");
  });
});

describe("checkpoints", () => {
  it("restores a portable filesystem checkpoint into a new runtime", async () => {
    const runtime = await newRuntime();
    await runtime.writeFile("/workspace/src/main.ts", "export {};\n");
    await runtime.exec(
      "printf '#!/bin/sh\\necho tool\\n' > bin.sh && chmod +x bin.sh && ln -s src/main.ts link.ts",
    );
    const handle = await runtime.checkpoint({ kind: "filesystem", name: "after-run" });
    expect(handle).toMatchObject({
      provider: "local-subprocess",
      kind: "filesystem",
      scope: "portable",
      metadata: { name: "after-run" },
    });
    expect(handle.checkpointId).toMatch(/^sha256:[0-9a-f]{64}$/);
    await runtime.writeFile("/workspace/src/main.ts", "changed");

    const restored = await provider.restore(handle, context);
    created.push(restored);
    expect(await restored.readFile("/workspace/src/main.ts")).toBe("export {};\n");
    expect((await restored.exec("./bin.sh && readlink link.ts")).stdout).toBe(
      "tool\nsrc/main.ts\n",
    );

    await runtime.resume(handle);
    expect(await runtime.readFile("/workspace/src/main.ts")).toBe("export {};\n");
  });

  it("gives equal content the same id and different content a different id", async () => {
    const first = await newRuntime();
    const second = await newRuntime();
    for (const runtime of [first, second]) await runtime.writeFile("/workspace/same.txt", "same");
    const firstId = (await first.checkpoint({ kind: "filesystem" })).checkpointId;
    expect((await second.checkpoint({ kind: "filesystem" })).checkpointId).toBe(firstId);
    await second.exec("chmod +x same.txt");
    expect((await second.checkpoint({ kind: "filesystem" })).checkpointId).not.toBe(firstId);
  });

  it("throws provider_mismatch for a foreign handle", async () => {
    const runtime = await newRuntime();
    const foreign: SandboxCheckpointHandle = {
      provider: "cloudflare",
      checkpointId: "backup-1",
      sourceRuntimeId: "x",
      kind: "filesystem",
      scope: "portable",
    };
    expect(await codeOf(provider.restore(foreign, context))).toBe("provider_mismatch");
    expect(await codeOf(provider.resume(foreign, context))).toBe("provider_mismatch");
    expect(await codeOf(runtime.resume(foreign))).toBe("provider_mismatch");
    expect(
      await codeOf(
        provider.restore({ provider: "local-subprocess" } as SandboxCheckpointHandle, context),
      ),
    ).toBe("invalid_request");
  });

  it("fails closed for unknown, runtime-scoped and tampered checkpoints, leaving no runtime behind", async () => {
    const runtime = await newRuntime();
    await runtime.writeFile("/workspace/file.txt", "original");
    const handle = await runtime.checkpoint({ kind: "filesystem" });
    const before = (await readdir(join(rootDir, "runtimes"))).length;
    expect(
      await codeOf(
        provider.restore({ ...handle, checkpointId: `sha256:${"0".repeat(64)}` }, context),
      ),
    ).toBe("not_found");
    expect(await codeOf(provider.resume({ ...handle, scope: "runtime" }, context))).toBe(
      "unsupported_operation",
    );
    await writeHostFile(
      join(rootDir, "checkpoints", handle.checkpointId.slice("sha256:".length), "file.txt"),
      "tampered",
    );
    expect(await codeOf(provider.restore(handle, context))).toBe("integrity_failed");
    expect((await readdir(join(rootDir, "runtimes"))).length).toBe(before);
  });
});

describe("sandboxFactory", () => {
  it("creates a working sandbox under the root named by the environment", async () => {
    const sandbox = await sandboxFactory(context, { OPENMA_LOCAL_SUBPROCESS_ROOT: rootDir });
    expect((await sandbox.exec("echo ok")).stdout).toBe("ok\n");
    await sandbox.destroy?.();
  });
});
