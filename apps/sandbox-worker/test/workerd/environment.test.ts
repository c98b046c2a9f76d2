import { getSandbox } from "@cloudflare/sandbox";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { readEnvironmentSettings, workerContext } from "../../src/config.js";
import { claimQueuedWork } from "../../src/environment/claim-queued.js";
import { call, testEnv } from "../support/api.js";
import { DESTROY_FAULT_MESSAGE, failNextDestroys } from "../support/destroy-faults.js";
import {
  admin,
  claimedRowCount,
  claimedWork,
  containerIdOf,
  deliver,
  environment,
  expectNoItemContainers,
  liveContainers,
  newSession,
  queueSessions,
  queueTurn,
  resultText,
  runCron,
  runningClaims,
  sessionWork,
  transcript,
  waitForClaimedEnd,
  waitForSessionWork,
  webhooksFor,
} from "../support/environment.js";
import { persistedText } from "../support/persisted.js";

// Every line the Worker, its Durable Objects and the host log while these tests run (same isolate).
const logged: string[] = [];
beforeAll(() => {
  for (const level of ["log", "info", "warn", "error", "debug"] as const) {
    const original = console[level].bind(console);
    vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
      logged.push(args.map(String).join(" "));
      original(...args);
    });
  }
});
afterAll(() => {
  vi.restoreAllMocks();
});
// No sandbox outlives its work item: once a test's items ended, none of their containers is left running.
afterEach(async () => {
  await expectNoItemContainers();
}, 45_000);

describe("a self-hosted environment: signed webhook → claim → Durable Object → sandbox → AMA worker", () => {
  it("runs two turns of a session as claimed work, the second on the first's restored workspace", async () => {
    const sessionId = await newSession();
    await queueTurn(sessionId, [
      {
        name: "bash",
        input: { command: "mkdir -p notes && echo turn-1 > notes/state.txt && echo wrote" },
      },
      { name: "read", input: { file_path: "/workspace/notes/state.txt" } },
    ]);
    const [firstHook] = await webhooksFor(sessionId, 1);
    const accepted = await deliver(firstHook!);
    expect(accepted.status).toBe(202);
    expect(await accepted.json()).toEqual({ eventType: "session.pending" });
    const [firstWork] = await waitForSessionWork(sessionId, 1);
    const first = await waitForClaimedEnd(firstWork!.id);
    expect(first).toMatchObject({
      workId: firstWork!.id,
      sessionId,
      status: "completed",
      claims: 1,
      result: { type: "completed", revision: 1, generation: 1 },
    });

    await queueTurn(sessionId, [
      { name: "bash", input: { command: "cat notes/state.txt && echo turn-2 >> notes/state.txt" } },
    ]);
    const hooks = await webhooksFor(sessionId, 2);
    expect((await deliver(hooks[1]!)).status).toBe(202);
    const items = await waitForSessionWork(sessionId, 2);
    const second = await waitForClaimedEnd(items[1]!.id);
    expect(second.result).toMatchObject({ type: "completed", revision: 2, generation: 2 });

    // The SDK's worker inside the sandbox ran every tool call; turn 2 read turn 1's file back.
    const entries = await transcript(sessionId);
    expect(entries.map((entry) => [entry.name, entry.result?.is_error])).toEqual([
      ["bash", false],
      ["read", false],
      ["bash", false],
    ]);
    expect(resultText(entries[1]!)).toContain("turn-1");
    expect(resultText(entries[2]!)).toContain("turn-1");
    // Both items stopped at the platform, each ran in its own container, and both containers stopped.
    expect((await waitForSessionWork(sessionId, 2)).map((work) => work.state)).toEqual([
      "stopped",
      "stopped",
    ]);
    expect(second.runtimeId).not.toBe(first.runtimeId);
    for (const runtimeId of [first.runtimeId, second.runtimeId]) {
      expect(await getSandbox(testEnv.Sandbox, runtimeId ?? "").getState()).toMatchObject({
        status: expect.stringMatching(/^stopped/),
      });
    }
    // The workspace travelled between the turns as a checkpoint in R2.
    const backups = await testEnv.BACKUP_BUCKET.list({ prefix: "backups/" });
    expect(backups.objects.some((object) => object.key.endsWith("/meta.json"))).toBe(true);
  });

  it("refuses a webhook whose signature does not verify with 401, claims nothing, and the cron fallback claims the item", async () => {
    const sessionId = await newSession();
    await queueTurn(sessionId, [
      { name: "bash", input: { command: "echo fallback > fallback.txt" } },
    ]);
    const [hook] = await webhooksFor(sessionId, 1);
    const forged = {
      headers: { ...hook!.headers },
      body: hook!.body.replace(sessionId, `${sessionId}x`),
    };
    const unsigned = { headers: { "content-type": "application/json" }, body: hook!.body };
    for (const bad of [forged, unsigned]) {
      const refused = await deliver(bad);
      expect(refused.status).toBe(401);
      expect(await refused.json()).toMatchObject({ error: { code: "unauthorized" } });
    }
    const [queued] = await waitForSessionWork(sessionId, 1);
    expect(queued!.state).toBe("queued");
    expect(await claimedWork(queued!.id)).toBeNull();

    // The webhook was lost: the cron trigger's poll claims the item.
    await runCron();
    expect(await waitForClaimedEnd(queued!.id)).toMatchObject({ status: "completed", claims: 1 });
  });

  it("runs an item once when its webhook is delivered twice at the same time", async () => {
    const sessionId = await newSession();
    await queueTurn(sessionId, [
      { name: "bash", input: { command: "echo once >> count.txt && wc -l < count.txt" } },
    ]);
    const [hook] = await webhooksFor(sessionId, 1);
    const answers = await Promise.all([
      deliver(hook!),
      deliver(hook!),
      runCron().then(() => new Response(null, { status: 202 })),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual([202, 202, 202]);
    const [work] = await waitForSessionWork(sessionId, 1);
    expect(await waitForClaimedEnd(work!.id)).toMatchObject({ status: "completed", claims: 1 });
    expect(await sessionWork(sessionId)).toHaveLength(1);
    const entries = await transcript(sessionId);
    expect(entries).toHaveLength(1);
    expect(resultText(entries[0]!).trim()).toBe("1");
  });

  it("claims nothing and starts no sandbox when the cron trigger finds the queue empty", async () => {
    const before = await claimedRowCount();
    await runCron();
    expect(await claimQueuedWork(workerContext(testEnv))).toEqual({
      claimed: 0,
      duplicates: 0,
      saturated: false,
    });
    // The operators' claim pass goes through the same coordinator.
    const drained = await call("/v1/environment/claim", { method: "POST" });
    expect(drained.status).toBe(200);
    expect(await drained.json()).toEqual({ claimed: 0, duplicates: 0, saturated: false });
    expect((await call("/v1/environment/claim")).status).toBe(405);
    expect(await claimedRowCount()).toBe(before);
  });

  it("ends lease_lost when another owner takes the session's fence mid-run: nothing published, container destroyed", async () => {
    const sessionId = await newSession();
    await queueTurn(sessionId, [
      { name: "bash", input: { command: "echo started && sleep 20 && echo late > late.txt" } },
    ]);
    const [hook] = await webhooksFor(sessionId, 1);
    expect((await deliver(hook!)).status).toBe(202);
    const [work] = await waitForSessionWork(sessionId, 1);
    // Wait until the host holds the session's fence and the sandbox is up.
    const held = () =>
      testEnv.DB.prepare(
        "SELECT owner_id FROM runtime_resource_fences WHERE session_id = ? AND owner_id IS NOT NULL",
      )
        .bind(sessionId)
        .first();
    await expect
      .poll(
        async () => (await held()) !== null && (await claimedWork(work!.id))?.runtimeId != null,
        { timeout: 30_000, interval: 100 },
      )
      .toBe(true);
    const taken = await testEnv.DB.prepare(
      "UPDATE runtime_resource_fences SET owner_id = 'another-host', token_sha256 = 'taken', generation = generation + 1, expires_at = ? WHERE session_id = ? AND owner_id IS NOT NULL",
    )
      .bind(Date.now() + 600_000, sessionId)
      .run();
    expect(taken.meta.changes).toBe(1);

    const ended = await waitForClaimedEnd(work!.id);
    expect(ended).toMatchObject({
      status: "lease_lost",
      result: { type: "lease_lost", error: { code: "lease_lost" } },
    });
    const fence = await testEnv.DB.prepare(
      "SELECT published_generation, revision FROM runtime_resource_fences WHERE session_id = ?",
    )
      .bind(sessionId)
      .first();
    expect(fence).toEqual({ published_generation: 0, revision: 0 });
    await expect
      .poll(
        async () => (await getSandbox(testEnv.Sandbox, ended.runtimeId ?? "").getState()).status,
        { timeout: 30_000, interval: 200 },
      )
      .toMatch(/^stopped/);
    // The tool call never finished: the sandbox was destroyed under it. The 1.14 worker posts nothing; the
    // 1.17 one may still post, as an error, that its tool was stopped, if it does so before its process goes.
    const result = (await transcript(sessionId))[0]?.result ?? null;
    if (result !== null) {
      expect(result).toMatchObject({
        is_error: true,
        content: [{ type: "text", text: expect.stringMatching(/was stopped/) }],
      });
    }
    // The destroy broke the worker's log stream (connections drop, as on Cloudflare): the harness still
    // stops the process and reads its status, and none of that may start the item's container again.
    await expectNoItemContainers();
    // The waits above may take up to 30 + 30 + 60 + 30 s on a loaded machine: the deadline covers them all.
  }, 150_000);

  it("records an orphan when a claimed item's container destroy fails, and the cron reconciler reaps it: the container is gone", async () => {
    const sessionId = await newSession();
    await queueTurn(sessionId, [
      {
        name: "bash",
        input: { command: "echo orphaned > orphan.txt && sleep 5 && cat orphan.txt" },
      },
    ]);
    const [hook] = await webhooksFor(sessionId, 1);
    expect((await deliver(hook!)).status).toBe(202);
    const [work] = await waitForSessionWork(sessionId, 1);
    let runtimeId = "";
    await expect
      .poll(async () => (runtimeId = (await claimedWork(work!.id))?.runtimeId ?? ""), {
        timeout: 30_000,
        interval: 100,
      })
      .not.toBe("");
    // The container's stop request is lost: the runtime throws and the container keeps running.
    const containerId = containerIdOf(runtimeId);
    failNextDestroys(containerId);

    const ended = await waitForClaimedEnd(work!.id);
    expect(ended).toMatchObject({
      status: "completed",
      runtimeId,
      result: { type: "completed", revision: 1 },
    });
    const cleanupErrors = ended.result?.type === "completed" ? ended.result.cleanupErrors : [];
    expect(cleanupErrors.map((error) => error.context?.stage)).toContain("sandbox-terminate");
    expect(JSON.stringify(cleanupErrors)).toContain(DESTROY_FAULT_MESSAGE);
    const orphanOf = async () =>
      (
        (await (await call("/v1/orphans")).json()) as { data: { sandbox: { runtimeId: string } }[] }
      ).data.find((orphan) => orphan.sandbox.runtimeId === runtimeId);
    // The item published before cleanup, so the orphan is recorded for a completed run.
    expect(await orphanOf()).toMatchObject({
      reason: "completed",
      attempts: 1,
      lastError: expect.stringContaining(DESTROY_FAULT_MESSAGE),
    });
    expect(await liveContainers()).toContain(containerId);
    // The platform stopped the item; the container outlived it until the reconciler reaps it.
    expect((await sessionWork(sessionId)).map((item) => item.state)).toEqual(["stopped"]);

    // The orphan becomes due once its backoff after the failed terminate passed; each cron pass tries.
    await expect
      .poll(
        async () => {
          await runCron();
          return (await orphanOf()) === undefined;
        },
        { timeout: 90_000, interval: 2_000 },
      )
      .toBe(true);
    expect(await liveContainers()).not.toContain(containerId);
    expect(await getSandbox(testEnv.Sandbox, runtimeId).getState()).toMatchObject({
      status: expect.stringMatching(/^stopped/),
    });
  }, 180_000);

  it("keeps ENVIRONMENT_MAX_CLAIMS items running at most when more webhooks arrive at once, and each ending item hands its slot on", async () => {
    const bound = readEnvironmentSettings(testEnv).maxClaimsPerPass;
    const { sessionIds, hooks } = await queueSessions(bound + 2);
    expect(
      (await Promise.all(hooks.map((hook) => deliver(hook)))).map((answer) => answer.status),
    ).toEqual(hooks.map(() => 202));
    // Sampled while the items run; without the coordinator the concurrent passes claim all of them at once.
    let peak = 0;
    const wanted = new Set(sessionIds);
    const items = async () =>
      (
        await admin<{ data: Awaited<ReturnType<typeof sessionWork>> }>(
          `/admin/v1/work?environment_id=${environment.environmentId}`,
        )
      ).data.filter((item) => wanted.has(item.data.id));
    await expect
      .poll(
        async () => {
          peak = Math.max(peak, await runningClaims());
          return (await items()).filter((item) => item.state === "stopped").length;
        },
        { timeout: 120_000, interval: 100 },
      )
      .toBe(bound + 2);
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThanOrEqual(bound);
    // No cron trigger ran: the two items over the bound were claimed as slots were freed.
    for (const item of await items())
      expect(await waitForClaimedEnd(item.id)).toMatchObject({ status: "completed", claims: 1 });
  }, 180_000);

  it("keeps the environment key, the webhook secret and every work secret out of D1, Durable Object storage, R2 and logs", async () => {
    const text = await persistedText(environment);
    expect(text.length).toBeGreaterThan(0);
    const everything = [text, ...logged].join("\n");
    const webhookKey = environment.webhookSecret.slice("whsec_".length);
    for (const secret of [environment.environmentKey, environment.webhookSecret, webhookKey])
      expect(everything).not.toContain(secret);
    // A work secret is base64url JSON ("eyJ…") carrying `sessions_token`; neither form appears.
    expect(everything).not.toMatch(/sessions_token|sk-ant-/);
    expect([text, ...logged].join("\n").match(/eyJ[A-Za-z0-9_-]{16,}/g) ?? []).toEqual([]);
  });
});
