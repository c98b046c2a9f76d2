import { getSandbox } from "@cloudflare/sandbox";
import { describe, expect, it } from "vitest";
import { testEnv } from "../support/api.js";
import { deliver, newSession, queueTurn, resultText, transcript, waitForClaimedEnd, waitForSessionWork, webhooksFor } from "../support/environment.js";

describe("a self-hosted environment: signed webhook → claim → Durable Object → sandbox → AMA worker", () => {
  it("runs two turns of a session as claimed work, the second on the first's restored workspace", async () => {
    const sessionId = await newSession();
    await queueTurn(sessionId, [
      { name: "bash", input: { command: "mkdir -p notes && echo turn-1 > notes/state.txt && echo wrote" } },
      { name: "read", input: { file_path: "/workspace/notes/state.txt" } },
    ]);
    const [firstHook] = await webhooksFor(sessionId, 1);
    const accepted = await deliver(firstHook!);
    expect(accepted.status).toBe(202);
    expect(await accepted.json()).toEqual({ eventType: "session.pending" });
    const [firstWork] = await waitForSessionWork(sessionId, 1);
    const first = await waitForClaimedEnd(firstWork!.id);
    expect(first).toMatchObject({ workId: firstWork!.id, sessionId, status: "completed", claims: 1, result: { type: "completed", revision: 1, generation: 1 } });

    await queueTurn(sessionId, [{ name: "bash", input: { command: "cat notes/state.txt && echo turn-2 >> notes/state.txt" } }]);
    const hooks = await webhooksFor(sessionId, 2);
    expect((await deliver(hooks[1]!)).status).toBe(202);
    const items = await waitForSessionWork(sessionId, 2);
    const second = await waitForClaimedEnd(items[1]!.id);
    expect(second.result).toMatchObject({ type: "completed", revision: 2, generation: 2 });

    // The SDK's worker inside the sandbox ran every tool call; turn 2 read turn 1's file back.
    const entries = await transcript(sessionId);
    expect(entries.map((entry) => [entry.name, entry.result?.is_error])).toEqual([["bash", false], ["read", false], ["bash", false]]);
    expect(resultText(entries[1]!)).toContain("turn-1");
    expect(resultText(entries[2]!)).toContain("turn-1");
    // Both items stopped at the platform, each ran in its own container, and both containers stopped.
    expect((await waitForSessionWork(sessionId, 2)).map((work) => work.state)).toEqual(["stopped", "stopped"]);
    expect(second.runtimeId).not.toBe(first.runtimeId);
    for (const runtimeId of [first.runtimeId, second.runtimeId]) {
      expect(await getSandbox(testEnv.Sandbox, runtimeId ?? "").getState()).toMatchObject({ status: expect.stringMatching(/^stopped/) });
    }
    // The workspace travelled between the turns as a checkpoint in R2.
    const backups = await testEnv.BACKUP_BUCKET.list({ prefix: "backups/" });
    expect(backups.objects.some((object) => object.key.endsWith("/meta.json"))).toBe(true);
  });
});
