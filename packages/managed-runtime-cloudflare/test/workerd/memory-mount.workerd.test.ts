import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it } from "vitest";
import { createCloudflareRuntime, newRuntimeId } from "../../src/index.js";
import { type CloudflareSandboxStub, createCloudflareSdkSandbox } from "../../src/sdk.js";
import { sdkStub } from "./fixtures.js";

const settings = {
  bucketName: "oma-memory",
  endpoint: "https://test-account.r2.cloudflarestorage.com",
};

/** The real SDK stub, with its mountBucket calls recorded on the way through. */
function recordingStub(runtimeId: string) {
  const stub = sdkStub(runtimeId);
  const calls: unknown[][] = [];
  const recording = new Proxy(stub, {
    get(target, property, receiver) {
      if (property !== "mountBucket") return Reflect.get(target, property, receiver);
      return (...args: Parameters<CloudflareSandboxStub["mountBucket"]>) => {
        calls.push(args);
        return target.mountBucket(...args);
      };
    },
  });
  return { calls, stub: recording as CloudflareSandboxStub };
}

describe("memory-store mounts on the Cloudflare runtime", () => {
  it("mounts the store's prefix of the memory bucket at /mnt/memory/<name>, read-only when asked", async () => {
    const runtimeId = newRuntimeId();
    const { calls, stub } = recordingStub(runtimeId);
    const runtime = createCloudflareRuntime({
      sandbox: createCloudflareSdkSandbox(stub),
      runtimeId,
      backupTtlSec: 3600,
      memoryMount: settings,
    });
    expect(typeof runtime.mountMemoryStore).toBe("function");
    // The local container has no s3fs: the real SDK prepares the mount and the mount command fails.
    const readOnly = await runtime
      .mountMemoryStore?.({ storeName: "notes", storeId: "mem_01", readOnly: true })
      .catch((caught: unknown) => caught);
    expect(ManagedRuntimeError.hasCode(readOnly, "sandbox_failed")).toBe(true);
    await runtime
      .mountMemoryStore?.({ storeName: "scratch", storeId: "mem_02", readOnly: false })
      .catch(() => undefined);
    expect(calls).toEqual([
      [
        "oma-memory",
        "/mnt/memory/notes",
        {
          endpoint: settings.endpoint,
          prefix: "/memory-stores/mem_01/",
          provider: "r2",
          credentialProxy: true,
          readOnly: true,
        },
      ],
      [
        "oma-memory",
        "/mnt/memory/scratch",
        {
          endpoint: settings.endpoint,
          prefix: "/memory-stores/mem_02/",
          provider: "r2",
          credentialProxy: true,
        },
      ],
    ]);
    await runtime.destroy();
  });

  it("refuses store names and ids that are not one path segment, before the SDK is asked", async () => {
    const runtimeId = newRuntimeId();
    const { calls, stub } = recordingStub(runtimeId);
    const runtime = createCloudflareRuntime({
      sandbox: createCloudflareSdkSandbox(stub),
      runtimeId,
      backupTtlSec: 3600,
      memoryMount: settings,
    });
    for (const input of [
      { storeName: "../workspace", storeId: "mem_1" },
      { storeName: "notes", storeId: "a/b" },
      { storeName: "..", storeId: "mem_1" },
      { storeName: "notes; rm -rf /", storeId: "mem_1" },
    ]) {
      const error = await runtime
        .mountMemoryStore?.({ ...input, readOnly: true })
        .catch((caught: unknown) => caught);
      expect(ManagedRuntimeError.hasCode(error, "invalid_request"), JSON.stringify(input)).toBe(
        true,
      );
    }
    expect(calls).toEqual([]);
  });

  it("has no mountMemoryStore without a memory bucket (unsupported means absent)", () => {
    const runtimeId = newRuntimeId();
    const runtime = createCloudflareRuntime({
      sandbox: createCloudflareSdkSandbox(sdkStub(runtimeId)),
      runtimeId,
      backupTtlSec: 3600,
    });
    expect("mountMemoryStore" in runtime).toBe(false);
  });
});
