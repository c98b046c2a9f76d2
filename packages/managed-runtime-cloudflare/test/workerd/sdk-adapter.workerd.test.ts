import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { afterEach, describe, expect, it } from "vitest";
import type { CloudflareSandbox } from "../../src/index.js";
import { freshSandbox } from "./fixtures.js";

const opened: CloudflareSandbox[] = [];
function open(namespace?: "SANDBOX" | "PLAIN_SANDBOX"): ReturnType<typeof freshSandbox> {
  const fresh = freshSandbox(namespace);
  opened.push(fresh.sandbox);
  return fresh;
}
afterEach(async () => {
  await Promise.all(opened.splice(0).map((sandbox) => sandbox.destroy().catch(() => undefined)));
});

describe("SDK adapter over the real Sandbox Durable Object", () => {
  it("returns exit codes and output, and an exit does not end the SDK's session shell", async () => {
    const { sandbox } = open();
    const failed = await sandbox.exec("echo out; echo err >&2; exit 3", { timeoutMs: 10_000 });
    expect(failed).toMatchObject({
      exitCode: 3,
      stdout: expect.stringContaining("out"),
      stderr: expect.stringContaining("err"),
    });
    const next = await sandbox.exec("pwd; printf '%s' \"$GREETING\"", {
      timeoutMs: 10_000,
      env: { GREETING: "hello" },
    });
    expect(next.exitCode).toBe(0);
    expect(next.stdout).toBe("/workspace\nhello");
    const elsewhere = await sandbox.exec("pwd", { timeoutMs: 10_000, cwd: "/tmp" });
    expect(elsewhere.stdout.trim()).toBe("/tmp");
  });

  it("enforces its own exec deadline with a timeout error", async () => {
    const { sandbox } = open();
    const started = Date.now();
    const error = await sandbox
      .exec("sleep 5", { timeoutMs: 500 })
      .catch((caught: unknown) => caught);
    expect(ManagedRuntimeError.hasCode(error, "timeout")).toBe(true);
    expect(Date.now() - started).toBeLessThan(4_000);
  });

  it("round-trips text and binary files and reports a missing file as not_found", async () => {
    const { sandbox } = open();
    const binary = Uint8Array.from([0xff, 0xfe, 0x00, 0x01, 0x80, 0x0a, 0x0d, 0xc3]);
    await sandbox.writeFile("/workspace/deep/dir/data.bin", binary);
    expect([...(await sandbox.readFile("/workspace/deep/dir/data.bin"))]).toEqual([...binary]);
    await sandbox.writeFile("/workspace/text.txt", new TextEncoder().encode("héllo\n"));
    const viaShell = await sandbox.exec("cat /workspace/text.txt", { timeoutMs: 10_000 });
    expect(viaShell.stdout).toContain("héllo");
    const missing = await sandbox
      .readFile("/workspace/missing.txt")
      .catch((caught: unknown) => caught);
    expect(ManagedRuntimeError.hasCode(missing, "not_found")).toBe(true);
  });

  it("streams a background process's output to its exit and reports its status", async () => {
    const { sandbox } = open();
    const process = await sandbox.startProcess(
      "sh -c 'echo one; echo two >&2; sleep 0.2; echo three; exit 4'",
    );
    const events = [];
    for await (const event of sandbox.processLogs(process.id, new AbortController().signal))
      events.push(event);
    const stdout = events
      .flatMap((event) => (event.type === "stdout" ? [event.data] : []))
      .join("");
    expect(stdout).toBe("one\nthree\n");
    expect(
      events
        .filter((event) => event.type === "stderr")
        .map((event) => (event.type === "stderr" ? event.data : ""))
        .join(""),
    ).toBe("two\n");
    expect(events.at(-1)).toEqual({ type: "exit", exitCode: 4 });
    expect(await sandbox.processStatus(process.id)).toMatchObject({ exitCode: 4 });
    expect(await sandbox.processStatus("no-such-process")).toBeNull();
  });

  it("kills a running process; killing it again is success", async () => {
    const { sandbox } = open();
    const process = await sandbox.startProcess("sleep 30");
    await sandbox.killProcess(process.id, "SIGTERM");
    await sandbox.killProcess(process.id, "SIGTERM");
    let last;
    for await (const event of sandbox.processLogs(process.id, new AbortController().signal))
      last = event;
    expect(last?.type).toBe("exit");
  });

  it("reads container state without starting the container, and destroy is idempotent", async () => {
    const { sandbox } = open();
    expect(await sandbox.containerState()).toBe("stopped");
    await sandbox.exec("true", { timeoutMs: 10_000 });
    expect(["running", "healthy"]).toContain(await sandbox.containerState());
    await sandbox.renewActivityTimeout();
    await sandbox.destroy();
    await sandbox.destroy();
    expect(["stopped", "stopped_with_code"]).toContain(await sandbox.containerState());
  });

  it("surfaces the unmodified SDK's backup and bucket-mount failures as typed errors", async () => {
    // The local container has neither squashfs backup routes nor s3fs; the real SDK code reaches it and fails.
    const { sandbox } = open("PLAIN_SANDBOX");
    await sandbox.exec("true", { timeoutMs: 10_000 });
    const backup = await sandbox
      .createBackup({ dir: "/workspace", ttlSec: 60 })
      .catch((caught: unknown) => caught);
    expect(ManagedRuntimeError.isInstance(backup)).toBe(true);
    // Without BACKUP_BUCKET and its presigning settings the SDK refuses before the container is asked.
    expect((backup as ManagedRuntimeError).code).toBe("invalid_config");
    const mount = await sandbox
      .mountBucket({
        bucket: "oma-workspaces",
        mountPath: "/workspace",
        endpoint: "https://account.r2.cloudflarestorage.com",
        prefix: "/sessions/s/workspace/",
      })
      .catch((caught: unknown) => caught);
    expect(ManagedRuntimeError.hasCode(mount, "sandbox_failed")).toBe(true);
    await sandbox.unmountBucket("/workspace");
  });
});
