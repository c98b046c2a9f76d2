import { getSandbox } from "@cloudflare/sandbox";
import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { afterEach, describe, expect, it } from "vitest";
import { type CloudflareRuntime, createCloudflareSandboxProvider } from "../../src/index.js";
import { createSandbox, readText, testEnv } from "./fixtures.js";

const provider = createCloudflareSandboxProvider({
  env: testEnv,
  createSandbox,
  backupTtlSec: 3_600,
});
const context = { sessionId: "runtime-tests", workdir: "/workspace" };
const runtimes: CloudflareRuntime[] = [];
async function create(): Promise<CloudflareRuntime> {
  const runtime = await provider.create(context);
  runtimes.push(runtime);
  return runtime;
}
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((runtime) => runtime.destroy().catch(() => undefined)));
});

describe("duplex processes over SDK background processes", () => {
  it("carries stdin to the process in order and closes it, with stdout and stderr apart", async () => {
    const runtime = await create();
    const process = await runtime.spawnDuplexProcess({
      command: "sh",
      args: [
        "-c",
        'while IFS= read -r line; do echo "got:$line"; echo "err:$line" >&2; done; echo done',
      ],
    });
    const writer = process.stdin.getWriter();
    await writer.write(new TextEncoder().encode("alpha\nbe"));
    await writer.write(new TextEncoder().encode("ta\n"));
    await writer.close();
    const [stdout, stderr, exit] = await Promise.all([
      readText(process.stdout),
      readText(process.stderr),
      process.exited,
    ]);
    expect(stdout).toBe("got:alpha\ngot:beta\ndone\n");
    expect(stderr).toBe("err:alpha\nerr:beta\n");
    expect(exit).toEqual({ code: 0, signal: null });
  });

  it("splits a large write into chunks without losing or reordering bytes", async () => {
    const runtime = await create();
    const process = await runtime.spawnDuplexProcess({
      command: "sh",
      args: ["-c", "wc -c; sha256sum | cut -d' ' -f1"],
    });
    const payload = new Uint8Array(200_000).map((_, index) => (index * 7) % 251);
    const writer = process.stdin.getWriter();
    await writer.write(payload);
    await writer.close();
    const stdout = await readText(process.stdout);
    expect(stdout.split("\n")[0]?.trim()).toBe("200000");
    await process.exited;
  });

  it("answers a line protocol interactively and reports a kill", async () => {
    const runtime = await create();
    const process = await runtime.spawnDuplexProcess({
      command: "sh",
      args: ["-c", 'IFS= read -r first; echo "ready:$first"; sleep 30'],
      cwd: "/tmp",
      env: { MARK: "m" },
    });
    const reader = process.stdout.getReader();
    const writer = process.stdin.getWriter();
    await writer.write(new TextEncoder().encode("ping\n"));
    const { value } = await reader.read();
    expect(new TextDecoder().decode(value)).toBe("ready:ping\n");
    process.kill("SIGTERM");
    const exit = await process.exited;
    expect(exit.code === null || exit.code !== 0).toBe(true);
  });

  it("fails the exit code of a missing command, and leaves no stdin files behind", async () => {
    const runtime = await create();
    const process = await runtime.spawnDuplexProcess({ command: "openma-no-such-command" });
    await process.stdin.close();
    await readText(process.stdout);
    expect((await process.exited).code).toBe(127);
    const leftovers = await runtime.exec("ls -A /tmp/.oma-duplex 2>/dev/null | wc -l");
    expect(leftovers.stdout.trim()).toBe("0");
  });
});

describe("lease, status and backups", () => {
  it("renews the lease while the container runs and reports lease_lost once it is gone", async () => {
    const runtime = await create();
    await runtime.exec("true");
    await runtime.renewLease({ ttlMs: 90_000 });
    expect(await runtime.status()).toBe("running");
    await runtime.destroy();
    expect(await runtime.status()).toBe("stopped");
    const lost = await runtime.renewLease({ ttlMs: 90_000 }).catch((caught: unknown) => caught);
    expect(ManagedRuntimeError.hasCode(lost, "lease_lost")).toBe(true);
  });

  it("restores a checkpoint into a new container and applies it again after the container slept", async () => {
    const source = await create();
    await source.writeFile("/workspace/notes/state.txt", "persisted");
    const handle = await source.checkpoint({ kind: "filesystem", name: "runtime-test" });
    expect(handle).toMatchObject({
      provider: "cloudflare",
      kind: "filesystem",
      scope: "portable",
      sourceRuntimeId: source.runtimeHandle().runtimeId,
    });

    const restored = await provider.restore(handle, context);
    runtimes.push(restored);
    expect(await restored.readFile("/workspace/notes/state.txt")).toBe("persisted");
    const stub = getSandbox(testEnv.SANDBOX, restored.runtimeHandle().runtimeId);
    expect(await stub.restoreCount()).toBe(1);

    // A sleeping container loses the restored overlay: stop it the way sleepAfter does.
    await stub.stop();
    await expect.poll(() => restored.status(), { timeout: 10_000 }).toBe("stopped");
    expect((await restored.exec("cat /workspace/notes/state.txt")).stdout).toBe("persisted");
    expect(await stub.restoreCount()).toBe(2);
  });

  it("refuses a foreign checkpoint and runtime-scoped resume with typed errors", async () => {
    const foreign = {
      provider: "e2b",
      checkpointId: "x",
      sourceRuntimeId: "y",
      kind: "filesystem" as const,
      scope: "portable" as const,
      metadata: { dir: "/workspace" },
    };
    expect(
      ManagedRuntimeError.hasCode(
        await provider.restore(foreign, context).catch((caught: unknown) => caught),
        "provider_mismatch",
      ),
    ).toBe(true);
    const own = { ...foreign, provider: "cloudflare", scope: "runtime" as const };
    expect(
      ManagedRuntimeError.hasCode(
        await provider.resume(own, context).catch((caught: unknown) => caught),
        "unsupported_operation",
      ),
    ).toBe(true);
    const runtime = await create();
    expect(
      ManagedRuntimeError.hasCode(
        await runtime.suspend({ kind: "filesystem" }).catch((caught: unknown) => caught),
        "unsupported_operation",
      ),
    ).toBe(true);
  });
});
