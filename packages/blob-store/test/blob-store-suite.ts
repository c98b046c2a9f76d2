import { createHash } from "node:crypto";
import { beforeEach, describe, expect, it } from "vitest";
import type { ErrorCode } from "@open-managed-agents/runtime-resource-contract";
import type { BlobStore } from "../src/index.js";
import { deterministicStream, hashingTap, slowTextStream } from "./support/deterministic-bytes.js";
import { startRssSampler } from "./support/rss-sampler.js";
import { codeOf } from "./support/typed-errors.js";

/** Cases of the shared suite; an implementation may skip one only with a stated reason. */
export type BlobStoreSuiteCase = "list-code-point-order";

/** How a test file plugs one implementation into the suite. */
export interface BlobStoreSuiteSetup {
  /** A store over an empty namespace; called before every case. */
  createStore(): BlobStore | Promise<BlobStore>;
  /** The ≥ 200 MiB streamed case, or the reason it does not apply. */
  readonly largeObject:
    | { readonly bytes: number; readonly maxRssGrowthBytes: number }
    | { readonly skip: string };
  /** Cases this implementation's test backend cannot run, each with its reason. */
  readonly skip?: Partial<Record<BlobStoreSuiteCase, string>>;
}

const MIB = 1024 * 1024;

async function expectCode(promise: Promise<unknown>, code: ErrorCode): Promise<void> {
  expect(await codeOf(promise)).toBe(code);
}

async function readStream(stream: ReadableStream<Uint8Array>): Promise<string> {
  return new Response(stream).text();
}

async function listAllKeys(
  store: BlobStore,
  options: { prefix?: string; limit?: number } = {},
): Promise<{ keys: string[]; pages: number }> {
  const keys: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await store.list({ ...options, ...(cursor ? { cursor } : {}) });
    pages += 1;
    keys.push(...page.objects.map((object) => object.key));
    cursor = page.cursor;
  } while (cursor !== undefined && pages < 50);
  return { keys, pages };
}

/**
 * Registers the shared {@link BlobStore} behaviour suite for one implementation: round trips of every
 * body kind, metadata, validation, deletes of missing keys, ordered paginated listing, conditional
 * puts (including concurrent writers) and, where it applies, one large streamed object with
 * bounded memory.
 */
export function describeBlobStoreSuite(name: string, setup: BlobStoreSuiteSetup): void {
  describe(`BlobStore suite: ${name}`, { timeout: 60_000 }, () => {
    let store: BlobStore;
    beforeEach(async () => {
      store = await setup.createStore();
    });
    const skippable = (id: BlobStoreSuiteCase, title: string, run: () => Promise<void>): void => {
      const reason = setup.skip?.[id];
      if (reason) it.skip(`${title} (skipped: ${reason})`, run);
      else it(title, run);
    };

    it("puts and gets bytes with size, etag, content type, metadata and upload time", async () => {
      const before = Date.now();
      const bytes = new Uint8Array([0, 1, 2, 250, 255]);
      const info = await store.put("docs/a.bin", bytes, {
        contentType: "application/x-test",
        customMetadata: { sha256: "abc", runtimeId: "rt_1" },
      });
      expect(info).toMatchObject({
        key: "docs/a.bin",
        size: 5,
        contentType: "application/x-test",
        customMetadata: { sha256: "abc", runtimeId: "rt_1" },
      });
      expect(info?.etag).toMatch(/^[^"]+$/);
      const object = await store.get("docs/a.bin");
      expect(object).toMatchObject({
        key: "docs/a.bin",
        size: 5,
        etag: info?.etag,
        contentType: "application/x-test",
        customMetadata: { sha256: "abc", runtimeId: "rt_1" },
      });
      expect(object?.uploaded.getTime()).toBeGreaterThan(before - 5 * 60_000);
      expect([...((await object?.bytes()) ?? [])]).toEqual([0, 1, 2, 250, 255]);
    });

    it("keeps what was put: a Buffer the caller changes or reuses after put changes nothing stored", async () => {
      const pooled = Buffer.alloc(64 * 1024, 1);
      await store.put("reused/a", pooled.subarray(0, 32 * 1024));
      pooled.fill(2);
      await store.put("reused/b", pooled.subarray(0, 32 * 1024));
      pooled.fill(3);
      const bytesOf = async (key: string) =>
        Buffer.from(await new Response((await store.get(key))?.stream()).arrayBuffer());
      expect((await bytesOf("reused/a")).equals(Buffer.alloc(32 * 1024, 1))).toBe(true);
      expect((await bytesOf("reused/b")).equals(Buffer.alloc(32 * 1024, 2))).toBe(true);
    });

    it("round-trips string, empty and stream bodies, with and without contentLength", async () => {
      await store.put("body/string", "héllo wörld ✓");
      await store.put("body/empty", new Uint8Array(0));
      await store.put("body/stream", slowTextStream(["one ", "two ", "three"], 1));
      await store.put("body/sized-stream", slowTextStream(["sized ", "body"], 1), {
        contentLength: 10,
      });
      expect(await (await store.get("body/string"))?.text()).toBe("héllo wörld ✓");
      expect((await store.head("body/string"))?.size).toBe(
        new TextEncoder().encode("héllo wörld ✓").byteLength,
      );
      const empty = await store.get("body/empty");
      expect(empty?.size).toBe(0);
      expect((await empty?.bytes())?.byteLength).toBe(0);
      expect(await readStream((await store.get("body/stream"))!.stream())).toBe("one two three");
      expect(await (await store.get("body/sized-stream"))?.text()).toBe("sized body");
    });

    it("streams a multi-chunk body back with stream()", async () => {
      const hash = createHash("sha256");
      await store.put(
        "body/one-mib",
        deterministicStream(MIB + 1, 7).pipeThrough(hashingTap(hash)),
      );
      const readHash = createHash("sha256");
      let total = 0;
      const reader = (await store.get("body/one-mib"))!.stream().getReader();
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
        readHash.update(chunk.value);
        total += chunk.value.byteLength;
      }
      expect(total).toBe(MIB + 1);
      expect(readHash.digest("hex")).toBe(hash.digest("hex"));
    });

    it("round-trips metadata names with capitals, underscores and dots and non-ASCII values", async () => {
      const customMetadata = {
        runtimeId: "rt_Ünïcode ✓",
        snake_case: "  padded  ",
        "dotted.name": "=?looks-encoded?=",
        UPPER: "",
      };
      await store.put("meta/object", "x", { customMetadata });
      expect((await store.head("meta/object"))?.customMetadata).toEqual(customMetadata);
      expect((await store.list({ prefix: "meta/" })).objects[0]?.customMetadata).toEqual(
        customMetadata,
      );
    });

    it("stores application/octet-stream when no content type is given", async () => {
      await store.put("meta/default-type", "x");
      expect((await store.head("meta/default-type"))?.contentType).toBe("application/octet-stream");
    });

    it("overwrites an object, replacing body and metadata", async () => {
      const first = await store.put("over/write", "first", { customMetadata: { version: "1" } });
      const second = await store.put("over/write", "second!", { customMetadata: { version: "2" } });
      expect(second?.etag).not.toBe(first?.etag);
      const object = await store.get("over/write");
      expect(object?.customMetadata).toEqual({ version: "2" });
      expect(object?.size).toBe(7);
      expect(await object?.text()).toBe("second!");
    });

    it("returns null from get and head for a missing key", async () => {
      expect(await store.get("missing/key")).toBeNull();
      expect(await store.head("missing/key")).toBeNull();
    });

    it("deletes objects, and deleting a missing key succeeds", async () => {
      await store.put("del/a", "a");
      await store.put("del/b", "b");
      await store.delete("del/a");
      await store.delete("del/a");
      await store.delete("never/existed/at/all");
      expect(await store.get("del/a")).toBeNull();
      expect(await (await store.get("del/b"))?.text()).toBe("b");
      expect((await listAllKeys(store)).keys).toEqual(["del/b"]);
    });

    it("rejects invalid keys with invalid_request on every method and stores nothing", async () => {
      const invalidKeys = [
        "",
        "/leading",
        "a//b",
        "trailing/",
        ".",
        "..",
        "a/./b",
        "a/../b",
        "nul\u0000byte",
        "tab\tkey",
        "x".repeat(1025),
        "\ud800lone",
      ];
      for (const key of invalidKeys) {
        await expectCode(store.put(key, "x"), "invalid_request");
        await expectCode(store.get(key), "invalid_request");
        await expectCode(store.head(key), "invalid_request");
        await expectCode(store.delete(key), "invalid_request");
      }
      await expectCode(store.put(42 as unknown as string, "x"), "invalid_request");
      expect((await store.list()).objects).toEqual([]);
    });

    it("rejects invalid put and list options with typed errors and stores nothing", async () => {
      await expectCode(
        store.put("opt/a", "x", { contentType: "text/plain\r\nx-injected: 1" }),
        "invalid_request",
      );
      await expectCode(
        store.put("opt/a", "x", { customMetadata: { "bad name": "x" } }),
        "invalid_request",
      );
      await expectCode(
        store.put("opt/a", "x", { customMetadata: { big: "v".repeat(2100) } }),
        "limit_exceeded",
      );
      await expectCode(store.put("opt/a", "x", { ifNoneMatch: "etag" as "*" }), "invalid_request");
      await expectCode(store.put("opt/a", 42 as unknown as string), "invalid_request");
      await expectCode(store.list({ limit: 0 }), "invalid_request");
      await expectCode(store.list({ limit: 1001 }), "invalid_request");
      await expectCode(store.list({ prefix: "/abs" }), "invalid_request");
      expect(await store.head("opt/a")).toBeNull();
    });

    it("rejects a body whose length differs from contentLength and stores nothing", async () => {
      await expectCode(store.put("len/bytes", "four", { contentLength: 5 }), "invalid_request");
      await expectCode(
        store.put("len/short", slowTextStream(["abc"], 1), { contentLength: 4 }),
        "invalid_request",
      );
      await expectCode(
        store.put("len/long", slowTextStream(["abc", "def"], 1), { contentLength: 4 }),
        "invalid_request",
      );
      const textChunks = new ReadableStream<string>({
        start: (controller) => (controller.enqueue("text"), controller.close()),
      });
      await expectCode(
        store.put("len/chunk", textChunks as unknown as ReadableStream<Uint8Array>),
        "invalid_request",
      );
      expect((await store.list({ prefix: "len/" })).objects).toEqual([]);
    });

    it("reads a body once: a second accessor call is invalid_request", async () => {
      await store.put("once/a", "body");
      const object = (await store.get("once/a"))!;
      expect(await object.text()).toBe("body");
      await expectCode(object.bytes(), "invalid_request");
      expect(() => object.stream()).toThrow(/already read/);
    });

    it("lists keys in order with sizes and metadata, filtered by prefix", async () => {
      for (const key of ["p/b", "p/a", "p/c/d", "q/a", "pz"])
        await store.put(key, key, { customMetadata: { origin: key } });
      const all = await store.list();
      expect(all.objects.map((object) => object.key)).toEqual(["p/a", "p/b", "p/c/d", "pz", "q/a"]);
      expect(all.cursor).toBeUndefined();
      expect(all.objects[2]).toMatchObject({
        key: "p/c/d",
        size: 5,
        customMetadata: { origin: "p/c/d" },
      });
      expect((await store.list({ prefix: "p/" })).objects.map((object) => object.key)).toEqual([
        "p/a",
        "p/b",
        "p/c/d",
      ]);
      expect((await store.list({ prefix: "p" })).objects.map((object) => object.key)).toEqual([
        "p/a",
        "p/b",
        "p/c/d",
        "pz",
      ]);
      expect((await store.list({ prefix: "p/c/" })).objects.map((object) => object.key)).toEqual([
        "p/c/d",
      ]);
      expect((await store.list({ prefix: "nothing/" })).objects).toEqual([]);
    });

    skippable(
      "list-code-point-order",
      "lists in code-point (UTF-8 byte) order across directory boundaries",
      async () => {
        const keys = ["a0", "a/b", "a-b", "a", "ä", "a/b/c", "😀", "\uffee"];
        for (const key of keys) await store.put(key, "x");
        expect((await listAllKeys(store, { limit: 3 })).keys).toEqual([
          "a",
          "a-b",
          "a/b",
          "a/b/c",
          "a0",
          "ä",
          "\uffee",
          "😀",
        ]);
      },
    );

    it("paginates with a cursor over more than two pages, with and without a prefix", async () => {
      const keys = Array.from(
        { length: 11 },
        (_, index) => `page/${String(index).padStart(2, "0")}`,
      );
      for (const key of keys) await store.put(key, key);
      await store.put("other/zz", "x");
      const first = await store.list({ prefix: "page/", limit: 4 });
      expect(first.objects.map((object) => object.key)).toEqual(keys.slice(0, 4));
      expect(first.cursor).toEqual(expect.any(String));
      const paged = await listAllKeys(store, { prefix: "page/", limit: 4 });
      expect(paged).toEqual({ keys, pages: 3 });
      const everything = await listAllKeys(store, { limit: 5 });
      expect(everything.keys).toEqual(["other/zz", ...keys]);
      expect(everything.pages).toBe(3);
    });

    it("puts with ifNoneMatch only when the key is free, for bytes and streams", async () => {
      expect(await store.put("cond/a", "first", { ifNoneMatch: "*" })).toMatchObject({
        key: "cond/a",
        size: 5,
      });
      expect(await store.put("cond/a", "second", { ifNoneMatch: "*" })).toBeNull();
      expect(
        await store.put("cond/a", slowTextStream(["third"], 1), { ifNoneMatch: "*" }),
      ).toBeNull();
      expect(
        await store.put("cond/a", slowTextStream(["fourth"], 1), {
          ifNoneMatch: "*",
          contentLength: 6,
        }),
      ).toBeNull();
      expect(await (await store.get("cond/a"))?.text()).toBe("first");
      await store.delete("cond/a");
      expect(
        await store.put("cond/a", slowTextStream(["after ", "delete"], 1), { ifNoneMatch: "*" }),
      ).not.toBeNull();
      expect(await (await store.get("cond/a"))?.text()).toBe("after delete");
    });

    it("lets exactly one of several concurrent conditional writers win", async () => {
      const rounds = [
        { writers: 2, stream: false },
        { writers: 2, stream: true },
        { writers: 2, stream: true },
        { writers: 6, stream: false },
        { writers: 6, stream: true },
      ];
      for (const [round, { writers, stream }] of rounds.entries()) {
        const key = `race/${round}`;
        const bodies = Array.from(
          { length: writers },
          (_, writer) => `writer-${writer}-of-round-${round}`,
        );
        const results = await Promise.all(
          bodies.map((body) =>
            store.put(key, stream ? slowTextStream([body.slice(0, 8), body.slice(8)], 3) : body, {
              ifNoneMatch: "*",
            }),
          ),
        );
        const winners = results.flatMap((result, writer) => (result === null ? [] : [writer]));
        expect(winners, `round ${round}`).toHaveLength(1);
        expect(await (await store.get(key))?.text()).toBe(bodies[winners[0] ?? -1]);
      }
    });

    const large = setup.largeObject;
    if ("skip" in large) {
      it.skip(`streams one large object with bounded memory (skipped: ${large.skip})`, () =>
        undefined);
    } else {
      it(`streams one ${Math.round(large.bytes / MIB)} MiB object in and out with bounded memory`, {
        timeout: 180_000,
      }, async () => {
        const writeHash = createHash("sha256");
        const sampler = startRssSampler();
        const info = await store.put(
          "large/object.bin",
          deterministicStream(large.bytes, 2026).pipeThrough(hashingTap(writeHash)),
          {
            contentType: "application/octet-stream",
          },
        );
        expect(info?.size).toBe(large.bytes);
        const object = await store.get("large/object.bin");
        expect(object?.size).toBe(large.bytes);
        const readHash = createHash("sha256");
        let readBytes = 0;
        const reader = object!.stream().getReader();
        for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
          readHash.update(chunk.value);
          readBytes += chunk.value.byteLength;
          sampler.sample();
        }
        const { peakGrowthBytes } = sampler.stop();
        expect(readBytes).toBe(large.bytes);
        expect(readHash.digest("hex")).toBe(writeHash.digest("hex"));
        expect(
          peakGrowthBytes,
          `RSS grew by ${Math.round(peakGrowthBytes / MIB)} MiB`,
        ).toBeLessThan(large.maxRssGrowthBytes);
      });
    }
  });
}
