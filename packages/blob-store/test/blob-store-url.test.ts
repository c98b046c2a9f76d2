import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createS3BlobStore } from "../src/s3/index.js";
import { createBlobStoreFromUrl } from "../src/url/index.js";
import { S3RVER_CREDENTIALS, type S3rverProcess, startS3rver } from "./support/s3rver.js";
import { errorOf } from "./support/typed-errors.js";

let s3rver: S3rverProcess;
let dir: string;
beforeAll(async () => {
  s3rver = await startS3rver();
  dir = await mkdtemp(join(tmpdir(), "blob-store-url-"));
}, 60_000);
afterAll(async () => {
  await s3rver?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("createBlobStoreFromUrl", () => {
  it("opens file:///dir as the filesystem store rooted there", async () => {
    const store = await createBlobStoreFromUrl(pathToFileURL(dir).href);
    await store.put("a/b.txt", "on disk");
    expect(await (await store.get("a/b.txt"))?.text()).toBe("on disk");
    expect((await readdir(dir)).length).toBeGreaterThan(0);
  });

  it("opens s3://bucket/prefix with the AWS_* environment and keeps keys under the prefix", async () => {
    const bucket = await s3rver.createBucket();
    const env = {
      AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
      AWS_ENDPOINT_URL_S3: s3rver.endpoint,
    };
    const store = await createBlobStoreFromUrl(`s3://${bucket}/ci/run-1`, { env });
    await store.put("checkpoints/one", "in the bucket");
    expect((await store.list()).objects.map((object) => object.key)).toEqual(["checkpoints/one"]);
    const raw = createS3BlobStore({ bucket, endpoint: s3rver.endpoint, ...S3RVER_CREDENTIALS });
    expect(await (await raw.get("ci/run-1/checkpoints/one"))?.text()).toBe("in the bucket");
  });

  it("names missing variables without their values", async () => {
    const error = await errorOf(
      createBlobStoreFromUrl("s3://bucket-name/x", {
        env: { AWS_ACCESS_KEY_ID: "AKIDSECRETVALUE" },
      }),
    );
    expect(error.code).toBe("invalid_config");
    expect(error.message).toContain("AWS_SECRET_ACCESS_KEY");
    expect(error.message).toContain("AWS_ENDPOINT_URL_S3");
    expect(JSON.stringify(error.toJSON())).not.toContain("AKIDSECRETVALUE");
  });

  it("refuses credentials in the URL without echoing them", async () => {
    const error = await errorOf(
      createBlobStoreFromUrl("s3://AKID:hunter2secret@bucket-name/x", { env: {} }),
    );
    expect(error.code).toBe("invalid_config");
    expect(JSON.stringify(error.toJSON())).not.toContain("hunter2secret");
  });

  it.each(["http://example.com/x", "not a url", "file://host/dir", "s3://bucket-name/x?region=y"])(
    "refuses %j with invalid_config",
    async (url) => {
      expect((await errorOf(createBlobStoreFromUrl(url, { env: {} }))).code).toBe("invalid_config");
    },
  );

  it("opens memory: as a fresh in-memory store", async () => {
    const store = await createBlobStoreFromUrl("memory:");
    await store.put("k", "v");
    expect(await (await store.get("k"))?.text()).toBe("v");
    expect(await (await createBlobStoreFromUrl("memory:")).get("k")).toBeNull();
  });
});
