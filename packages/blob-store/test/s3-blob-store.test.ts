import { createHash } from "node:crypto";
import { GetObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { createR2BlobStoreFromEnv, createS3BlobStore } from "../src/s3/index.js";
import { decodeS3Metadata, encodeS3Metadata } from "../src/s3/s3-metadata.js";
import { describeBlobStoreSuite } from "./blob-store-suite.js";
import { deterministicStream, slowTextStream } from "./support/deterministic-bytes.js";
import { startMalformedS3Server } from "./support/malformed-s3-server.js";
import { S3RVER_CREDENTIALS, type S3rverProcess, startS3rver } from "./support/s3rver.js";
import { errorOf } from "./support/typed-errors.js";

let s3rver: S3rverProcess;
beforeAll(async () => {
  s3rver = await startS3rver();
}, 60_000);
afterAll(async () => {
  await s3rver?.stop();
});

function configError(run: () => unknown): ManagedRuntimeError {
  try {
    run();
  } catch (error) {
    if (ManagedRuntimeError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected an error");
}

describeBlobStoreSuite("S3 (s3rver 3.7.1 child process)", {
  createStore: async () =>
    createS3BlobStore({
      bucket: await s3rver.createBucket(),
      endpoint: s3rver.endpoint,
      ...S3RVER_CREDENTIALS,
    }),
  largeObject: { bytes: 200 * 1024 * 1024, maxRssGrowthBytes: 100 * 1024 * 1024 },
  skip: {
    "list-code-point-order":
      "s3rver 3.7.1 walks its directory tree and lists 'a/b' before 'a-b'; S3 and R2 list in UTF-8 byte order",
  },
});

describe("S3 blob store specifics", () => {
  it("needs the test server's If-None-Match handling: plain s3rver 3.7.1 ignores the header on PUT", async () => {
    const put = (body: string) =>
      s3rver.client.send(
        new PutObjectCommand({ Bucket: "plain", Key: "probe", Body: body, IfNoneMatch: "*" }),
      );
    await put("first");
    await expect(put("second")).resolves.toBeDefined();
  });

  it("needs the test server's write ordering: plain s3rver 3.7.1 answers a PUT before the bytes are in its file", {
    timeout: 60_000,
  }, async () => {
    // The first write of each of the server's file streams waits 300 ms, as a loaded disk can make it.
    const slow = await startS3rver({ slowObjectWritesMs: 300 });
    try {
      await slow.client.send(
        new PutObjectCommand({ Bucket: "plain", Key: "probe", Body: "written late" }),
      );
      const early = await slow.client.send(new GetObjectCommand({ Bucket: "plain", Key: "probe" }));
      expect(await early.Body?.transformToString()).toBe("");

      const store = createS3BlobStore({
        bucket: await slow.createBucket(),
        endpoint: slow.endpoint,
        ...S3RVER_CREDENTIALS,
        partSizeBytes: 5 * 1024 * 1024,
      });
      const multipart = 6 * 1024 * 1024;
      // Each read follows its write at once, as the store's callers do.
      await store.put("bytes", "written late");
      expect(await (await store.get("bytes"))?.text()).toBe("written late");
      await store.put("stream", slowTextStream(["written ", "late"], 1), { ifNoneMatch: "*" });
      expect(await (await store.get("stream"))?.text()).toBe("written late");
      await store.put("multipart", deterministicStream(multipart, 7));
      const expected = createHash("sha256");
      for await (const chunk of deterministicStream(
        multipart,
        7,
      ) as unknown as AsyncIterable<Uint8Array>)
        expected.update(chunk);
      const stored = (await (await store.get("multipart"))?.bytes()) ?? new Uint8Array();
      expect(createHash("sha256").update(stored).digest("hex")).toBe(expected.digest("hex"));
    } finally {
      await slow.stop();
    }
  });

  it("encodes metadata names and values so S3's lower-casing and header rules lose nothing", () => {
    const metadata = {
      runtimeId: "rt",
      snake_case: "é",
      plain: "ascii value",
      tricky: "=?UTF-8?B?AA==?=",
    };
    const encoded = encodeS3Metadata(metadata);
    expect(Object.keys(encoded)).toEqual(["runtime_id", "snake__case", "plain", "tricky"]);
    expect(encoded.plain).toBe("ascii value");
    expect(Object.values(encoded).every((value) => /^[\x20-\x7e]*$/.test(value))).toBe(true);
    expect(decodeS3Metadata(encoded)).toEqual(metadata);
  });

  it("maps rejected credentials to unauthorized without echoing them", async () => {
    // s3rver 3.7.1 does not verify SigV4 signatures, so an unknown access key id is what it rejects.
    const secretAccessKey = "wrong-secret-value-1234";
    const store = createS3BlobStore({
      bucket: "plain",
      endpoint: s3rver.endpoint,
      accessKeyId: "AKIAUNKNOWNKEY99",
      secretAccessKey,
      maxAttempts: 1,
    });
    const error = await errorOf(store.head("anything"));
    expect(error.code).toBe("unauthorized");
    const second = await errorOf(store.put("k", "v"));
    expect(second.code).toBe("unauthorized");
    expect(second.message).toContain("InvalidAccessKeyId");
    for (const text of [
      error.message,
      JSON.stringify(error.toJSON()),
      second.message,
      JSON.stringify(second.toJSON()),
    ]) {
      expect(text).not.toContain(secretAccessKey);
      expect(text).not.toContain("AKIAUNKNOWNKEY99");
    }
  });

  it("maps a missing bucket to not_found where the answer says so", async () => {
    const store = createS3BlobStore({
      bucket: "no-such-bucket",
      endpoint: s3rver.endpoint,
      ...S3RVER_CREDENTIALS,
      maxAttempts: 1,
    });
    expect((await errorOf(store.get("k"))).code).toBe("not_found");
    expect((await errorOf(store.put("k", "v"))).code).toBe("not_found");
    expect((await errorOf(store.list())).code).toBe("not_found");
    // A HEAD answer has no body, so a missing bucket looks like a missing key.
    expect(await store.head("k")).toBeNull();
  });

  it("maps malformed answers to upstream_protocol", async () => {
    const server = await startMalformedS3Server();
    try {
      const store = createS3BlobStore({
        bucket: "broken",
        endpoint: server.endpoint,
        accessKeyId: "id",
        secretAccessKey: "secret",
        maxAttempts: 1,
      });
      expect((await errorOf(store.head("k"))).code).toBe("upstream_protocol");
      expect((await errorOf(store.get("k"))).code).toBe("upstream_protocol");
      expect((await errorOf(store.list())).code).toBe("upstream_protocol");
      expect((await errorOf(store.put("k", "v"))).code).toBe("upstream_protocol");
    } finally {
      await server.close();
    }
  });

  it("aborts a streamed multipart upload whose source fails, storing nothing", async () => {
    const store = createS3BlobStore({
      bucket: await s3rver.createBucket(),
      endpoint: s3rver.endpoint,
      ...S3RVER_CREDENTIALS,
      partSizeBytes: 5 * 1024 * 1024,
    });
    let sent = 0;
    const failing = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 12 * 1024 * 1024) return controller.error(new Error("source failed"));
        sent += 1024 * 1024;
        controller.enqueue(new Uint8Array(1024 * 1024));
      },
    });
    expect(
      ManagedRuntimeError.isInstance(
        await store.put("broken/upload", failing).catch((error: unknown) => error),
      ),
    ).toBe(true);
    expect(await store.head("broken/upload")).toBeNull();
  });

  it("decides concurrent conditional multipart uploads at CompleteMultipartUpload: one wins", async () => {
    const store = createS3BlobStore({
      bucket: await s3rver.createBucket(),
      endpoint: s3rver.endpoint,
      ...S3RVER_CREDENTIALS,
      partSizeBytes: 5 * 1024 * 1024,
    });
    const bodies = [
      deterministicStream(11 * 1024 * 1024, 1),
      deterministicStream(11 * 1024 * 1024, 2),
    ];
    const results = await Promise.all(
      bodies.map((body) => store.put("race/multipart", body, { ifNoneMatch: "*" })),
    );
    expect(results.filter((result) => result !== null)).toHaveLength(1);
    const winner = results.findIndex((result) => result !== null);
    const expected = createHash("sha256")
      .update(
        new Uint8Array(
          await new Response(deterministicStream(11 * 1024 * 1024, winner + 1)).arrayBuffer(),
        ),
      )
      .digest("hex");
    expect(
      createHash("sha256")
        .update((await (await store.get("race/multipart"))?.bytes()) ?? new Uint8Array())
        .digest("hex"),
    ).toBe(expected);
  });

  it("validates options once, naming every missing field", () => {
    const missing = configError(() => createS3BlobStore({ bucket: "bucket" }));
    expect(missing.code).toBe("invalid_config");
    expect(missing.message).toContain("endpoint, accessKeyId, secretAccessKey");
    expect(
      configError(() =>
        createS3BlobStore({
          bucket: "Bad_Bucket",
          endpoint: "http://x",
          accessKeyId: "a",
          secretAccessKey: "b",
        }),
      ).message,
    ).toContain("bucket");
    expect(
      configError(() =>
        createS3BlobStore({
          bucket: "bucket",
          endpoint: "http://x",
          accessKeyId: "a",
          secretAccessKey: "b",
          partSizeBytes: 1024,
        }),
      ).message,
    ).toContain("partSizeBytes");
    expect(
      configError(() =>
        createS3BlobStore({
          bucket: "bucket",
          endpoint: "ftp://x",
          accessKeyId: "a",
          secretAccessKey: "b",
        }),
      ).message,
    ).toContain("endpoint");
    expect(() => createS3BlobStore({ bucket: "bucket", client: s3rver.client })).not.toThrow();
  });
});

describe("createR2BlobStoreFromEnv", () => {
  it("lists every missing variable by name and never a value", () => {
    const none = configError(() => createR2BlobStoreFromEnv({}));
    expect(none.code).toBe("invalid_config");
    expect(none.message).toContain(
      "R2_ACCESS_KEY_ID, R2_SECRET_ACCESS_KEY, R2_ENDPOINT, OMA_CLOUDFLARE_R2_BUCKET",
    );
    expect(none.context.missing).toEqual([
      "R2_ACCESS_KEY_ID",
      "R2_SECRET_ACCESS_KEY",
      "R2_ENDPOINT",
      "OMA_CLOUDFLARE_R2_BUCKET",
    ]);
    const partial = configError(() =>
      createR2BlobStoreFromEnv({
        R2_ACCESS_KEY_ID: "key-id-value",
        R2_SECRET_ACCESS_KEY: "secret-value",
        R2_ENDPOINT: " ",
      }),
    );
    expect(partial.context.missing).toEqual(["R2_ENDPOINT", "OMA_CLOUDFLARE_R2_BUCKET"]);
    expect(JSON.stringify(partial.toJSON())).not.toMatch(/key-id-value|secret-value/);
  });

  it("names an invalid endpoint or bucket variable, and honours bucketKey", () => {
    const env = {
      R2_ACCESS_KEY_ID: "id",
      R2_SECRET_ACCESS_KEY: "secret-value",
      R2_ENDPOINT: "not a url",
      OMA_CLOUDFLARE_R2_BUCKET: "bucket",
    };
    expect(configError(() => createR2BlobStoreFromEnv(env)).message).toContain("R2_ENDPOINT");
    expect(
      configError(() =>
        createR2BlobStoreFromEnv(
          { ...env, R2_ENDPOINT: "https://r2.example" },
          { bucketKey: "MY_BUCKET" },
        ),
      ).context.missing,
    ).toEqual(["MY_BUCKET"]);
    expect(
      configError(() =>
        createR2BlobStoreFromEnv({
          ...env,
          R2_ENDPOINT: "https://r2.example",
          OMA_CLOUDFLARE_R2_BUCKET: "Not Valid",
        }),
      ).message,
    ).toContain("OMA_CLOUDFLARE_R2_BUCKET");
  });

  it("builds a working store from the environment", async () => {
    const bucket = await s3rver.createBucket();
    const store = createR2BlobStoreFromEnv(
      {
        R2_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
        R2_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
        R2_ENDPOINT: s3rver.endpoint,
        CHECKPOINTS: bucket,
      },
      { bucketKey: "CHECKPOINTS" },
    );
    await store.put("from/env", slowTextStream(["configured ", "from env"], 1));
    expect(await (await store.get("from/env"))?.text()).toBe("configured from env");
  });
});
