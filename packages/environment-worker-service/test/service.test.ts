import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ServiceStack,
  makeReadOnly,
  sample,
  startServiceStack,
} from "./support/service-stack.js";

let stack: ServiceStack;

beforeAll(async () => {
  stack = await startServiceStack();
});

afterAll(async () => {
  await stack?.close();
});

const transcriptText = (sessionId: string) => JSON.stringify(stack.plane.transcript(sessionId));

const fetchText = async (url: string) => {
  const response = await fetch(url);
  return { status: response.status, text: await response.text() };
};

describe("oma-environment-worker against the local control plane and the local stack", () => {
  it("runs two user turns, the second reading the first's files, and /metrics counts what ran", async () => {
    const service = stack.start({ OMA_LOG_LEVEL: "debug" });
    try {
      const http = await service.httpUrl();
      expect((await fetchText(`${http}/healthz`)).status).toBe(200);
      const session = stack.plane.createSession({
        environmentId: stack.environment.id,
        title: "two turns",
      });
      stack.plane.queueTurn(session.id, {
        message: "write files",
        toolCalls: [
          {
            name: "bash",
            input: {
              command:
                "set -e; mkdir -p notes; echo 'hello from turn 1' > notes/hello.txt; head -c 20000000 /dev/urandom > data.bin; sha256sum data.bin notes/hello.txt > sums",
            },
          },
        ],
        finalMessage: "written",
      });
      stack.plane.queueTurn(session.id, {
        message: "read them",
        toolCalls: [
          {
            name: "bash",
            input: {
              command: 'set -e; sha256sum -c sums; echo "turn 2 found: $(cat notes/hello.txt)"',
            },
          },
        ],
        finalMessage: "verified",
      });
      const done = (n: number) =>
        service.waitFor(
          "work.done",
          (line) =>
            line.sessionId === session.id &&
            service.lines.filter((l) => l.event === "work.done" && l.sessionId === session.id)
              .length >= n,
        );
      await done(2);
      const reports = service.lines.filter(
        (line) => line.event === "work.done" && line.sessionId === session.id,
      );
      expect(reports.map((line) => line.outcome)).toEqual(["completed", "completed"]);
      const transcript = transcriptText(session.id);
      expect(transcript).toContain("data.bin: OK");
      expect(transcript).toContain("turn 2 found: hello from turn 1");

      const metrics = (await fetchText(`${http}/metrics`)).text;
      expect(
        sample(metrics, "oma_work_items_total", { lane: "ama_worker", outcome: "completed" }),
      ).toBe(2);
      expect(sample(metrics, "oma_work_items_total", { outcome: "failed" })).toBe(0);
      expect(
        sample(metrics, "oma_checkpoint_transfer_duration_seconds_count", {
          phase: "checkpoint",
          result: "ok",
        }),
      ).toBe(2);
      expect(
        sample(metrics, "oma_checkpoint_transfer_duration_seconds_count", {
          phase: "restore",
          result: "ok",
        }),
      ).toBe(1);
      expect(
        sample(metrics, "oma_checkpoint_transfer_bytes_total", { phase: "checkpoint" }),
      ).toBeGreaterThan(20_000_000);
      expect(
        sample(metrics, "oma_checkpoint_transfer_bytes_total", { phase: "restore" }),
      ).toBeGreaterThan(20_000_000);
      expect(
        sample(metrics, "oma_transaction_step_duration_seconds_count", {
          port: "harnessDriver",
          result: "ok",
        }),
      ).toBeGreaterThanOrEqual(2);
      expect(
        sample(metrics, "oma_transaction_step_duration_seconds_count", {
          port: "fence",
          call: "publish",
          result: "ok",
        }),
      ).toBe(2);
      expect(sample(metrics, "oma_sandboxes_alive")).toBe(0);
      expect(sample(metrics, "oma_orphans_pending")).toBe(0);
      expect(metrics).toContain("oma_journal_records_pending 0");
      // Checkpoints and restores report while they run and when they end, through the service's logger.
      expect(
        service.lines.filter(
          (line) => line.event === "checkpoint.done" && line.sessionId === session.id,
        ),
      ).toHaveLength(2);
      expect(
        service.lines.some(
          (line) => line.event === "restore.done" && line.sessionId === session.id,
        ),
      ).toBe(true);
      // 20 MB moved each way: at least one line per 16 MiB while it moved, naming the session.
      const transfer = service.lines.find(
        (line) => line.event === "checkpoint.transfer" && line.sessionId === session.id,
      );
      expect(transfer?.bytes).toBeGreaterThanOrEqual(16 * 1024 * 1024);
      expect(transfer?.objects).toBeGreaterThan(0);
      expect(
        service.lines.some(
          (line) => line.event === "restore.transfer" && line.sessionId === session.id,
        ),
      ).toBe(true);
      const ready = await fetchText(`${http}/readyz`);
      expect(ready.status).toBe(200);
      // At debug, each timed port call of the transaction is a line, with the token-free records it made.
      expect((await service.waitFor("service.started")).sdkVersion).toMatch(/^\d+\.\d+\.\d+/);
      const steps = service.lines.filter(
        (line) => line.event === "transaction.step" && line.sessionId === session.id,
      );
      const step = (name: string) => steps.filter((line) => `${line.port}.${line.call}` === name);
      expect(step("fence.acquire")).toHaveLength(2);
      expect(step("harnessDriver.run").every((line) => line.result === "ok")).toBe(true);
      expect(step("sandbox.acquire").map((line) => line.harness)).toEqual([
        expect.stringMatching(/^oma-ama-worker /),
        expect.stringMatching(/^oma-ama-worker /),
      ]);
      const checkpoints = step("workspace.checkpoint").map(
        (line) => line.checkpoint as Record<string, unknown>,
      );
      expect(checkpoints).toHaveLength(2);
      // A snapshot handle names its snapshot; what it moved is on the checkpoint's own line.
      for (const checkpoint of checkpoints)
        expect(checkpoint.archive).toMatch(/^sha256:[0-9a-f]{64}$/);
      const checkpointsDone = service.lines.filter(
        (line) => line.event === "checkpoint.done" && line.sessionId === session.id,
      );
      expect(
        checkpointsDone.every((line) => (line.bytes as number) > 0 && (line.entries as number) > 0),
      ).toBe(true);
      expect(steps.every((line) => typeof line.durationMs === "number")).toBe(true);
    } finally {
      expect(await service.stop()).toBe(0);
    }
    // No credential reached any line the service wrote.
    expect(service.output()).not.toContain(stack.environment.environmentKey);
    expect(service.output()).not.toContain(stack.bridge.apiKey);
  });

  it("answers /readyz 503 naming the store while the store is read-only, and 200 again after", async () => {
    const service = stack.start();
    try {
      const http = await service.httpUrl();
      type Readiness = { ready: boolean; checks: Record<string, { ok: boolean; detail?: string }> };
      let last: Readiness | undefined;
      // Answers are reused for 2 s; polled until a fresh one shows the state (a loaded machine may be slow).
      const readiness = async () => {
        const answer = await fetchText(`${http}/readyz`);
        last = JSON.parse(answer.text) as Readiness;
        const { api, store } = last.checks;
        return `${answer.status} api=${api?.ok} store=${store?.ok}`;
      };
      const poll = { timeout: 60_000, interval: 500 };
      await expect.poll(readiness, poll).toBe("200 api=true store=true");
      const undo = makeReadOnly(stack.storePath, "file");
      try {
        await expect.poll(readiness, poll).toBe("503 api=true store=false");
        expect(last?.ready).toBe(false);
        expect(last?.checks.store?.detail).toMatch(/the store refused a write/);
      } finally {
        undo();
      }
      await expect.poll(readiness, poll).toBe("200 api=true store=true");
    } finally {
      expect(await service.stop()).toBe(0);
    }
  });

  it("on SIGTERM during an item stops claiming, lets the item finish and publish, then exits 0", async () => {
    const service = stack.start({ OMA_SHUTDOWN_GRACE_MS: "120000" });
    const session = stack.plane.createSession({
      environmentId: stack.environment.id,
      title: "sigterm",
    });
    stack.plane.queueTurn(session.id, {
      message: "slow",
      toolCalls: [
        {
          name: "bash",
          input: { command: "sleep 3; echo slow turn wrote > slow.txt; echo done sleeping" },
        },
      ],
      finalMessage: "slow done",
    });
    await service.waitFor("sandbox.acquired");
    service.child.kill("SIGTERM");
    await service.waitFor("service.stopping");
    const code = await service.exited;
    expect(code).toBe(0);
    const report = service.lines.find(
      (line) => line.event === "work.done" && line.sessionId === session.id,
    );
    expect(report?.outcome).toBe("completed");
    expect(transcriptText(session.id)).toContain("done sleeping");
    // The turn's workspace was published: a later turn, in a new process, reads it.
    const next = stack.start();
    try {
      stack.plane.queueTurn(session.id, {
        message: "read",
        toolCalls: [{ name: "bash", input: { command: "cat slow.txt" } }],
        finalMessage: "read",
      });
      const done = await next.waitFor("work.done", (line) => line.sessionId === session.id);
      expect(done.outcome).toBe("completed");
      expect(transcriptText(session.id)).toContain("slow turn wrote");
    } finally {
      expect(await next.stop()).toBe(0);
    }
  });

  it("on a second signal ends at once, without waiting for the running item", async () => {
    const service = stack.start({ OMA_SHUTDOWN_GRACE_MS: "120000" });
    const session = stack.plane.createSession({
      environmentId: stack.environment.id,
      title: "second signal",
    });
    stack.plane.queueTurn(session.id, {
      message: "slow",
      toolCalls: [{ name: "bash", input: { command: "sleep 60" } }],
      finalMessage: "never",
    });
    await service.waitFor("sandbox.acquired");
    service.child.kill("SIGTERM");
    await service.waitFor("service.stopping");
    service.child.kill("SIGINT");
    expect(await service.exited).toBe(130);
    expect(service.lines.some((line) => line.event === "service.stopping_now")).toBe(true);
    expect(
      service.lines.some((line) => line.event === "work.done" && line.sessionId === session.id),
    ).toBe(false);
  });
});
