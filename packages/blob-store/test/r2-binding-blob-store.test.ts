import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type R2BucketLike, createR2BindingBlobStore } from "../src/r2/index.js";
import { describeBlobStoreSuite } from "./blob-store-suite.js";
import { deterministicStream, hashingTap } from "./support/deterministic-bytes.js";
import { codeOf, errorOf } from "./support/typed-errors.js";
import {
  type WorkerDispatch,
  createWorkerBlobStoreClient,
} from "./support/worker-blob-store-client.js";

// The adapter runs inside workerd: r2-worker.ts and the adapter are bundled by esbuild for a plain
// Worker (platform "neutral", no Node compatibility flag) and served by Miniflare with a real R2
// simulator binding. This process drives it over HTTP with the client in worker-blob-store-client.ts.

const MIB = 1024 * 1024;
let miniflare: Miniflare;
let bundleImports: string[] = [];
function bundleForWorker(entry: string) {
  return build({
    entryPoints: [fileURLToPath(new URL(entry, import.meta.url))],
    bundle: true,
    format: "esm",
    platform: "neutral",
    mainFields: ["module", "main"],
    conditions: ["workerd", "worker", "import"],
    target: "es2022",
    write: false,
    metafile: true,
    logLevel: "silent",
  });
}
let dispatch: WorkerDispatch;

beforeAll(async () => {
  const bundle = await bundleForWorker("./support/r2-worker.ts");
  bundleImports = Object.values(bundle.metafile.outputs).flatMap((output) =>
    output.imports.map((entry) => entry.path),
  );
  miniflare = new Miniflare({
    modules: true,
    script: bundle.outputFiles[0]?.text ?? "",
    compatibilityDate: "2026-04-01",
    r2Buckets: ["BUCKET"],
  });
  await miniflare.ready;
  dispatch = (url, init) =>
    miniflare.dispatchFetch(
      url,
      init as Parameters<Miniflare["dispatchFetch"]>[1],
    ) as unknown as Promise<Response>;
});
afterAll(async () => {
  await miniflare?.dispose();
});

const client = createWorkerBlobStoreClient((url, init) => dispatch(url, init));

describeBlobStoreSuite("R2 binding (adapter inside workerd, Miniflare R2 simulator)", {
  createStore: async () => {
    await dispatch("http://blob-store.test/reset", { method: "POST" });
    return client;
  },
  largeObject: {
    skip: "the body crosses into workerd and the R2 simulator, other processes, so this process's RSS says nothing about the adapter; the 5 MiB multipart case below covers its streaming path",
  },
});

describe("R2 binding adapter specifics", () => {
  it("bundles the root and ./r2 entries for a plain Worker with no Node or external import", async () => {
    expect(bundleImports).toEqual([]);
    const root = await bundleForWorker("../src/index.ts");
    expect(Object.values(root.metafile.outputs).flatMap((output) => output.imports)).toEqual([]);
  });

  it("uploads a stream of unknown length beyond one part as equal parts and reads it back intact", async () => {
    await dispatch("http://blob-store.test/reset", { method: "POST" });
    const writeHash = createHash("sha256");
    const info = await client.put(
      "multi/part",
      deterministicStream(5 * MIB + 123, 9).pipeThrough(hashingTap(writeHash)),
    );
    expect(info?.size).toBe(5 * MIB + 123);
    const readHash = createHash("sha256");
    const bytes = await (await client.get("multi/part"))!.bytes();
    expect(readHash.update(bytes).digest("hex")).toBe(writeHash.digest("hex"));
  });

  it("refuses a conditional put of an unknown-length stream beyond one part, and accepts it with contentLength", async () => {
    await dispatch("http://blob-store.test/reset", { method: "POST" });
    const size = 5 * MIB + 1;
    expect(
      await codeOf(client.put("cond/long", deterministicStream(size, 3), { ifNoneMatch: "*" })),
    ).toBe("unsupported_operation");
    expect(await client.head("cond/long")).toBeNull();
    expect(
      await client.put("cond/long", deterministicStream(size, 3), {
        ifNoneMatch: "*",
        contentLength: size,
      }),
    ).toMatchObject({ size });
    expect(
      await client.put("cond/long", deterministicStream(size, 4), {
        ifNoneMatch: "*",
        contentLength: size,
      }),
    ).toBeNull();
  });

  it("reports a malformed binding answer as upstream_protocol", async () => {
    const broken = { head: async () => ({ key: "k", size: -1 }) } as unknown as R2BucketLike;
    expect(await codeOf(createR2BindingBlobStore(broken).head("k"))).toBe("upstream_protocol");
  });

  it("wraps a binding failure as internal, naming the operation", async () => {
    const failing = {
      get: async () => {
        throw new Error("get: We encountered an internal error. (10001)");
      },
    } as unknown as R2BucketLike;
    const error = await errorOf(createR2BindingBlobStore(failing).get("k"));
    expect(error.code).toBe("internal");
    expect(error.context).toMatchObject({ operation: "get", key: "k" });
  });

  it("rejects invalid options with invalid_config", () => {
    expect(() => createR2BindingBlobStore({} as R2BucketLike, { partSizeBytes: 1024 })).toThrow(
      expect.objectContaining({ code: "invalid_config" }),
    );
  });
});
