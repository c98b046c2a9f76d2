import { getSandbox } from "@cloudflare/sandbox";
import { describe, expect, it } from "vitest";
import {
  newSessionId,
  outputText,
  readWork,
  shellProfile,
  startWork,
  testEnv,
  waitForEnd,
} from "../support/api.js";

describe("a work item through the real Sandbox Durable Object and the local container", () => {
  it("runs a harness that writes the workspace and outputs, and the next work item of the session sees the workspace", async () => {
    const sessionId = newSessionId();
    const first = await startWork(sessionId, {
      workId: "first",
      profile: shellProfile(
        "mkdir -p /workspace/notes && echo draft-1 > /workspace/notes/state.txt && echo wrote > /mnt/session/outputs/first.txt",
      ),
    });
    expect(first.response.status).toBe(202);
    expect(first.response.headers.get("location")).toBe(`/v1/sessions/${sessionId}/work/first`);
    expect(first.record).toMatchObject({
      sessionId,
      workId: "first",
      status: "queued",
      result: null,
    });

    const firstEnd = await waitForEnd(sessionId, "first");
    expect(firstEnd.result).toEqual({
      type: "completed",
      revision: 1,
      generation: 1,
      cleanupErrors: [],
    });
    expect(await outputText(sessionId, "first", "first.txt")).toBe("wrote\n");

    const second = await startWork(sessionId, {
      workId: "second",
      profile: shellProfile(
        "cat /workspace/notes/state.txt > /mnt/session/outputs/seen.txt && echo draft-2 >> /workspace/notes/state.txt",
      ),
    });
    expect(second.response.status).toBe(202);
    const secondEnd = await waitForEnd(sessionId, "second");
    expect(secondEnd.result).toEqual({
      type: "completed",
      revision: 2,
      generation: 2,
      cleanupErrors: [],
    });
    expect(await outputText(sessionId, "second", "seen.txt")).toBe("draft-1\n");

    // Each work item ran in its own container, and both containers were stopped when their item ended.
    expect(firstEnd.runtimeId).toMatch(/^oma-/);
    expect(secondEnd.runtimeId).not.toBe(firstEnd.runtimeId);
    for (const runtimeId of [firstEnd.runtimeId, secondEnd.runtimeId]) {
      expect(await getSandbox(testEnv.Sandbox, runtimeId ?? "").getState()).toMatchObject({
        status: expect.stringMatching(/^stopped/),
      });
    }
    // The workspace travelled as an SDK backup in the real R2 BACKUP_BUCKET.
    const backups = await testEnv.BACKUP_BUCKET.list({ prefix: "backups/" });
    expect(backups.objects.some((object) => object.key.endsWith("/meta.json"))).toBe(true);
  });

  it("runs a named profile from PROFILES (wrangler.jsonc), counting earlier runs kept in the workspace", async () => {
    const sessionId = newSessionId();
    for (const [index, workId] of ["one", "two"].entries()) {
      expect((await startWork(sessionId, { workId, profile: "hello" })).response.status).toBe(202);
      expect((await waitForEnd(sessionId, workId)).status).toBe("completed");
      expect(await outputText(sessionId, workId, "hello.txt")).toBe(`run ${index}\n`);
    }
  });

  it("reports a harness that exits non-zero as failed with a typed error, and publishes nothing", async () => {
    const sessionId = newSessionId();
    await startWork(sessionId, {
      workId: "bad",
      profile: shellProfile("echo partial > /workspace/partial.txt; exit 3"),
    });
    const ended = await waitForEnd(sessionId, "bad");
    expect(ended.status).toBe("failed");
    expect(ended.result).toMatchObject({ type: "failed", error: { code: "sandbox_failed" } });
    // Nothing was published: the next item starts from revision 1 and does not see the failed item's file.
    await startWork(sessionId, {
      workId: "after",
      profile: shellProfile("test ! -e /workspace/partial.txt"),
    });
    expect((await waitForEnd(sessionId, "after")).result).toMatchObject({
      type: "completed",
      revision: 1,
    });
  });

  it("returns an existing work item unchanged when its id is started again", async () => {
    const sessionId = newSessionId();
    await startWork(sessionId, {
      workId: "once",
      profile: shellProfile("echo once >> /workspace/count.txt"),
    });
    await waitForEnd(sessionId, "once");
    const again = await startWork(sessionId, { workId: "once", profile: shellProfile("exit 9") });
    expect(again.response.status).toBe(200);
    expect(again.record).toMatchObject({ workId: "once", status: "completed" });
    expect((await readWork(sessionId, "once")).result).toMatchObject({
      type: "completed",
      revision: 1,
    });
  });
});
