import { getSandbox } from "@cloudflare/sandbox";
import { expect, it } from "vitest";
import {
  newSessionId,
  outputText,
  readWork,
  shellProfile,
  startWork,
  testEnv,
  waitForEnd,
} from "../support/api.js";

it("refuses a second concurrent work item of one session with conflict, from the D1 fence, and lets the first finish", async () => {
  const sessionId = newSessionId();
  await startWork(sessionId, {
    workId: "holder",
    profile: shellProfile(
      "while [ ! -f /workspace/.release ]; do sleep 0.1; done; echo held > /mnt/session/outputs/holder.txt",
    ),
  });
  // The runtime id is recorded after the fence is taken: from here on the session's fence is held.
  let runtimeId: string | null = null;
  await expect
    .poll(
      async () => {
        runtimeId = (await readWork(sessionId, "holder")).runtimeId;
        return runtimeId;
      },
      { timeout: 30_000, interval: 100 },
    )
    .not.toBeNull();

  const contender = await startWork(sessionId, {
    workId: "contender",
    profile: shellProfile("echo never > /mnt/session/outputs/contender.txt"),
  });
  expect(contender.response.status).toBe(202);
  const refused = await waitForEnd(sessionId, "contender");
  expect(refused.status).toBe("conflict");
  expect(refused.result).toMatchObject({ type: "conflict", expiresAt: expect.any(String) });
  expect(Date.parse((refused.result as { expiresAt: string }).expiresAt)).toBeGreaterThan(
    Date.now(),
  );
  expect(refused.runtimeId).toBeNull();

  // The fence row names the holder, never the contender; no token is stored, only its hash.
  const fence = await testEnv.DB.prepare(
    "SELECT work_id, generation, token_sha256 FROM runtime_resource_fences WHERE session_id = ?",
  )
    .bind(sessionId)
    .first();
  expect(fence).toMatchObject({
    work_id: "holder",
    generation: 1,
    token_sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
  });

  await getSandbox(testEnv.Sandbox, runtimeId ?? "").exec("touch /workspace/.release");
  expect((await waitForEnd(sessionId, "holder")).result).toMatchObject({
    type: "completed",
    revision: 1,
    generation: 1,
  });
  expect(await outputText(sessionId, "holder", "holder.txt")).toBe("held\n");
  expect(await outputText(sessionId, "contender", "contender.txt")).toBeNull();

  // Once the holder released the fence, the session takes new work at the next generation.
  await startWork(sessionId, {
    workId: "next",
    profile: shellProfile("test -f /workspace/.release"),
  });
  expect((await waitForEnd(sessionId, "next")).result).toMatchObject({
    type: "completed",
    revision: 2,
    generation: 2,
  });
});
