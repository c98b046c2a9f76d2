import { describe, expect, it, vi } from "vitest";
import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { createS3BlobStore } from "../src/s3/index.js";

// Stands in for a host without `@aws-sdk/client-s3` installed (this workspace always has it): importing it fails.
vi.mock("@aws-sdk/client-s3", () => {
  throw new Error("Cannot find package '@aws-sdk/client-s3'");
});

describe("S3 store without the SDK installed", () => {
  it("is created, and fails every call with invalid_config naming the package", async () => {
    const store = createS3BlobStore({
      bucket: "bucket",
      endpoint: "http://127.0.0.1:1",
      accessKeyId: "AKIAEXAMPLE",
      secretAccessKey: "secret-example-value",
    });
    for (const call of [
      () => store.head("key"),
      () => store.put("key", "value"),
      () => store.get("key"),
      () => store.delete("key"),
      () => store.list(),
    ]) {
      const error = await call().then(
        () => null,
        (caught: unknown) => caught,
      );
      expect(
        ManagedRuntimeError.isInstance(error) && { code: error.code, message: error.message },
      ).toEqual({
        code: "invalid_config",
        message: "the S3 blob store needs the @aws-sdk/client-s3 package",
      });
    }
  });
});
