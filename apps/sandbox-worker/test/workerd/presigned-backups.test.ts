import { createExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { workerContext } from "../../src/config.js";
import worker from "../../src/index.js";
import { runWorkItem } from "../../src/work/run-work-item.js";
import { ORIGIN, TOKEN, newSessionId, shellProfile, testEnv } from "../support/api.js";

// The deployed default: backups upload through presigned R2 URLs. wrangler.jsonc leaves CLOUDFLARE_ACCOUNT_ID
// empty, and the R2 keys are secrets that are not set here.
const presigned = { ...testEnv, SANDBOX_LOCAL_BACKUPS: "false" };

describe("presigned workspace backups without their settings", () => {
  it("refuses to queue a durable work item, naming the first missing key", async () => {
    const sessionId = newSessionId();
    const start = (profile: unknown, env = presigned) =>
      worker.fetch(
        new Request(`${ORIGIN}/v1/sessions/${sessionId}/work`, {
          method: "POST",
          headers: { authorization: `Bearer ${TOKEN}` },
          body: JSON.stringify({ profile }),
        }),
        env,
        createExecutionContext(),
      );
    const refused = await start(shellProfile("true"));
    expect(refused.status).toBe(500);
    expect(await refused.json()).toMatchObject({
      error: { code: "invalid_config", context: { field: "CLOUDFLARE_ACCOUNT_ID" } },
    });
    const withAccount = await start(shellProfile("true"), {
      ...presigned,
      CLOUDFLARE_ACCOUNT_ID: "0123456789abcdef0123456789abcdef",
    });
    expect(await withAccount.json()).toMatchObject({
      error: { code: "invalid_config", context: { field: "R2_ACCESS_KEY_ID" } },
    });
    expect(
      await testEnv.DB.prepare("SELECT COUNT(*) AS count FROM work_items WHERE session_id = ?")
        .bind(sessionId)
        .first("count"),
    ).toBe(0);
    // An ephemeral workspace needs no backup, so it is accepted.
    expect(
      (
        await start({
          ...shellProfile("true"),
          workspace: { requirement: "ephemeral" },
          outputs: { requirement: "disabled" },
        })
      ).status,
    ).toBe(202);
  });

  it("and the SDK, asked anyway, fails the run with a typed error naming the same keys", async () => {
    const outcome = await runWorkItem(
      workerContext(presigned),
      {
        sessionId: newSessionId(),
        workId: "w",
        profile: shellProfile("echo hi > /workspace/a.txt"),
      },
      { ownerId: "presigned-test" },
    );
    expect(outcome).toMatchObject({
      type: "failed",
      error: {
        code: "invalid_config",
        context: { stage: "workspace-checkpoint", operation: "createBackup" },
      },
    });
    const message = outcome.type === "failed" ? outcome.error.message : "";
    for (const key of ["CLOUDFLARE_ACCOUNT_ID", "R2_ACCESS_KEY_ID", "R2_SECRET_ACCESS_KEY"])
      expect(message).toContain(key);
  });
});
