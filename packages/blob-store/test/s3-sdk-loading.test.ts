import { describe, expect, it, vi } from "vitest";
import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { createR2BlobStoreFromEnv, createS3BlobStore } from "../src/s3/index.js";

// Counts the imports of `@aws-sdk/client-s3` in this file's module graph; the real module is what the stores
// then use. The cases run in order: the first import is what they watch.
const sdk = vi.hoisted(() => ({ imports: 0 }));
vi.mock("@aws-sdk/client-s3", async (importOriginal) => {
  sdk.imports += 1;
  return await importOriginal();
});

// Nothing listens on port 1: a call fails at connect, after the SDK is loaded and the client built.
const UNREACHABLE = {
  bucket: "bucket",
  endpoint: "http://127.0.0.1:1",
  accessKeyId: "AKIAEXAMPLE",
  secretAccessKey: "secret-example-value",
  maxAttempts: 1,
};

describe("S3 SDK loading", () => {
  it("refuses bad options when a store is created, with the SDK not imported", () => {
    expect(() => createS3BlobStore({ bucket: "B" })).toThrow(
      expect.objectContaining({ code: "invalid_config" }),
    );
    expect(() => createR2BlobStoreFromEnv({})).toThrow(
      expect.objectContaining({ code: "invalid_config" }),
    );
    expect(sdk.imports).toBe(0);
  });

  it("imports the SDK with a store's first call, not with the S3 entry or a store's creation, and once", async () => {
    const store = createS3BlobStore(UNREACHABLE);
    createR2BlobStoreFromEnv({
      OMA_CLOUDFLARE_R2_BUCKET: "bucket",
      R2_ENDPOINT: "http://127.0.0.1:1",
      R2_ACCESS_KEY_ID: "AKIAEXAMPLE",
      R2_SECRET_ACCESS_KEY: "secret-example-value",
    });
    expect(sdk.imports).toBe(0);

    const failure = await store.head("key").then(
      () => null,
      (error: unknown) => error,
    );
    expect(ManagedRuntimeError.isInstance(failure)).toBe(true);
    expect(sdk.imports).toBe(1);
    // Later calls, of this store and another, use the same import.
    await Promise.allSettled([
      store.get("key"),
      store.put("key", "value"),
      createS3BlobStore(UNREACHABLE).head("key"),
    ]);
    expect(sdk.imports).toBe(1);
  });
});
