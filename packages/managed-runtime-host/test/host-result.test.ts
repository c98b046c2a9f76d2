import { describe, expect, it } from "vitest";
import type { RuntimeResourceFence } from "@open-managed-agents/runtime-resource-contract";
import { amaProfile, createHostFixture, scope, serializedOutputs } from "./support/fixture.js";
import { tokensOf } from "./support/invariants.js";

describe("host.run result on completed", () => {
  it("returns the published workspace checkpoint and output manifest, equal to what the fence store holds", async () => {
    const fixture = createHostFixture({
      runtime: {
        outputs: {
          entries: [
            { logicalPath: "a.txt", contentHash: "sha256:aa", size: 1 },
            { logicalPath: "b.txt", contentHash: "sha256:bb", size: 2 },
          ],
        },
      },
    });
    const result = await fixture.run();
    if (result.type !== "completed") throw new Error(`run ended ${result.type}`);
    expect(result.published).toEqual({
      workspaceCheckpoint: {
        id: expect.stringMatching(/^wck-/),
        contentHash: expect.stringMatching(/^sha256:/),
      },
      outputManifest: {
        id: expect.stringMatching(/^out-manifest-/),
        contentHash: expect.stringMatching(/^sha256:/),
        entries: 2,
      },
    });
    const publish = fixture.journal.of("fences.publish")[0]?.input as {
      fence: RuntimeResourceFence;
      workspaceCandidate: { id: string; contentHash: string };
      outputCandidate: { id: string; contentHash: string } | null;
    };
    expect(result.published.workspaceCheckpoint).toEqual({
      id: publish.workspaceCandidate.id,
      contentHash: publish.workspaceCandidate.contentHash,
    });
    expect(result.published.outputManifest).toMatchObject({
      id: publish.outputCandidate?.id,
      contentHash: publish.outputCandidate?.contentHash,
    });
    const acquired = await fixture.deps.fenceStore.acquire({
      scope,
      ownerId: "reader",
      ttlMs: 1_000,
    });
    if (acquired.type !== "acquired") throw new Error("fence still held");
    expect(acquired.publication?.workspaceCandidate.id).toBe(
      result.published.workspaceCheckpoint.id,
    );
    expect(acquired.publication?.outputCandidate?.id).toBe(result.published.outputManifest?.id);
    expect(acquired.publication?.revision).toBe(result.revision);
    expect(await serializedOutputs(fixture, result)).not.toContain(tokensOf(fixture.journal)[0]);
  });

  it("reports no output manifest when outputs are disabled", async () => {
    const fixture = createHostFixture();
    const result = await fixture.run({
      profile: { ...amaProfile, outputs: { requirement: "disabled" } },
    });
    if (result.type !== "completed") throw new Error(`run ended ${result.type}`);
    expect(result.published.outputManifest).toBeNull();
    expect(result.published.workspaceCheckpoint.id).toMatch(/^wck-/);
  });
});
