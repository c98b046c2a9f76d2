import { describe, expect, it } from "vitest";
import { createMemoryBlobStore, createPrefixedBlobStore } from "../src/index.js";
import { describeBlobStoreSuite } from "./blob-store-suite.js";
import { codeOf } from "./support/typed-errors.js";

describeBlobStoreSuite("prefixed view of memory", {
  createStore: async () => {
    const shared = createMemoryBlobStore();
    // A neighbour under another prefix and one at the root: the view must never show them.
    await shared.put("team-b/ci/a", "neighbour");
    await shared.put("team-a", "root");
    return createPrefixedBlobStore({ store: shared, prefix: "team-a/ci" });
  },
  largeObject: {
    skip: "the view adds no buffering; the memory store below holds every byte by design",
  },
});

describe("createPrefixedBlobStore", () => {
  it("stores under the prefix and returns the caller's keys", async () => {
    const shared = createMemoryBlobStore();
    const view = createPrefixedBlobStore({ store: shared, prefix: "team-a/ci" });
    const info = await view.put("checkpoints/one", "hello");
    expect(info?.key).toBe("checkpoints/one");
    expect((await shared.head("team-a/ci/checkpoints/one"))?.size).toBe(5);
    expect((await view.get("checkpoints/one"))?.key).toBe("checkpoints/one");
    expect(await (await view.get("checkpoints/one"))?.text()).toBe("hello");
    expect((await view.list({ prefix: "check" })).objects.map((object) => object.key)).toEqual([
      "checkpoints/one",
    ]);
    await view.delete("checkpoints/one");
    expect(await shared.head("team-a/ci/checkpoints/one")).toBeNull();
  });

  it.each(["", "/a", "a/", "a//b", "a/../b"])(
    "refuses the prefix %j with invalid_config",
    async (prefix) => {
      expect(
        await codeOf(
          Promise.resolve().then(() =>
            createPrefixedBlobStore({ store: createMemoryBlobStore(), prefix }),
          ),
        ),
      ).toBe("invalid_config");
    },
  );
});
