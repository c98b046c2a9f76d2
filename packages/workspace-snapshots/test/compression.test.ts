import { createMemoryBlobStore } from "@open-managed-agents/blob-store";
import { describe, it } from "vitest";
import { createLocalSnapshotSandbox } from "../src/index.js";
import { expectRoundTrip, localPlace } from "./support.js";
import { mutate, populate, random } from "./workspace-fixture.js";

// Each compression carries a checkpoint's contents out of the sandbox and a restore's archive into it; the
// archive and the lists are read from the spool through one buffer that the stream takes back for each read.
describe("every compression", () => {
  for (const compression of ["auto", "gzip", "off"] as const) {
    it(`restores a later checkpoint byte-identical (${compression})`, async () => {
      const store = createMemoryBlobStore();
      const sandbox = createLocalSnapshotSandbox();
      const source = await localPlace(store, `source-${compression}`, { compression });
      const target = await localPlace(store, `target-${compression}`, { compression });
      try {
        const rng = random(7);
        await populate(source.workspace, rng);
        const first = await source.snapshots.checkpoint({ sandbox, sessionId: "s" });
        await mutate(source.workspace, rng, 4);
        await expectRoundTrip(source, target, sandbox, first.id);
      } finally {
        await source.dispose();
        await target.dispose();
      }
    });
  }
});
