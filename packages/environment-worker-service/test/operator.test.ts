import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFailingDeleteProxy } from "./support/failing-delete-proxy.js";
import { type ServiceStack, sample, startServiceStack } from "./support/service-stack.js";

let stack: ServiceStack;

beforeAll(async () => {
  stack = await startServiceStack();
});

afterAll(async () => {
  await stack?.close();
});

const json = <T>(text: string) => JSON.parse(text) as T;
const transcriptText = (sessionId: string) => JSON.stringify(stack.plane.transcript(sessionId));

describe("the operator CLI over the service's store", () => {
  it("lists an orphan left by a failed terminate, reaps it once the bridge answers, and lists none after", async () => {
    const proxy = await startFailingDeleteProxy(stack.bridge.url);
    try {
      // The service's own reconciler waits an hour, so the operator reaps.
      const service = stack.start({
        OMA_CLOUDFLARE_BRIDGE_URL: proxy.url,
        OMA_RECONCILE_INTERVAL_MS: "3600000",
      });
      const session = stack.plane.createSession({
        environmentId: stack.environment.id,
        title: "orphan",
      });
      try {
        stack.plane.queueTurn(session.id, {
          message: "touch",
          toolCalls: [{ name: "bash", input: { command: "echo kept > kept.txt" } }],
          finalMessage: "ok",
        });
        const done = await service.waitFor("work.done", (line) => line.sessionId === session.id);
        expect(done.outcome).toBe("completed");
      } finally {
        expect(await service.stop()).toBe(0);
      }
      expect(proxy.deletesRefused).toBeGreaterThan(0);

      const listed = await stack.run(["orphans", "--json"]);
      expect(listed.code).toBe(0);
      const { orphans } = json<{
        orphans: {
          id: string;
          scope: { sessionId: string };
          sandbox: { provider: string; runtimeId: string };
        }[];
      }>(listed.stdout);
      const orphan = orphans.find((record) => record.scope.sessionId === session.id);
      expect(orphan?.sandbox.provider).toBe("cloudflare-bridge");
      const readable = await stack.run(["orphans"]);
      expect(readable.stdout).toContain(
        `${orphan?.id}  ${session.id}  cloudflare-bridge/${orphan?.sandbox.runtimeId}`,
      );

      proxy.failDeletes = false;
      const reaped = await stack.run(["orphans", "--reap", "--json"], {
        OMA_CLOUDFLARE_BRIDGE_URL: proxy.url,
      });
      expect(reaped.code).toBe(0);
      expect(
        json<{ summary: { reaped: number }; orphansLeft: number }>(reaped.stdout),
      ).toMatchObject({
        orphansLeft: 0,
      });
      expect(
        json<{ summary: { reaped: number } }>(reaped.stdout).summary.reaped,
      ).toBeGreaterThanOrEqual(1);
      const after = json<{ orphans: unknown[]; journal: unknown[] }>(
        (await stack.run(["orphans", "--json"])).stdout,
      );
      expect(after.orphans).toEqual([]);
    } finally {
      await proxy.close();
    }
  });

  it("reaps an orphan in the service's own reconciler once the bridge answers, and counts it", async () => {
    const proxy = await startFailingDeleteProxy(stack.bridge.url);
    try {
      const first = stack.start({
        OMA_CLOUDFLARE_BRIDGE_URL: proxy.url,
        OMA_RECONCILE_INTERVAL_MS: "3600000",
      });
      const session = stack.plane.createSession({
        environmentId: stack.environment.id,
        title: "reconciled",
      });
      try {
        stack.plane.queueTurn(session.id, {
          message: "touch",
          toolCalls: [{ name: "bash", input: { command: "true" } }],
          finalMessage: "ok",
        });
        expect(
          (await first.waitFor("work.done", (line) => line.sessionId === session.id)).outcome,
        ).toBe("completed");
      } finally {
        expect(await first.stop()).toBe(0);
      }
      type Listing = { orphans: { scope: { sessionId: string } }[] };
      const mine = (listing: Listing) =>
        listing.orphans.filter((record) => record.scope.sessionId === session.id);
      expect(mine(json<Listing>((await stack.run(["orphans", "--json"])).stdout))).toHaveLength(1);

      proxy.failDeletes = false;
      // The record is due 10 s after the failed terminate (the reconciler's first backoff).
      const second = stack.start({
        OMA_CLOUDFLARE_BRIDGE_URL: proxy.url,
        OMA_RECONCILE_INTERVAL_MS: "500",
      });
      try {
        const http = await second.httpUrl();
        const pass = await second.waitFor(
          "reconciler.pass",
          (line) => Number(line.orphan_reaped) > 0,
        );
        expect(pass.orphan_failed).toBe(0);
        const metrics = await (await fetch(`${http}/metrics`)).text();
        expect(
          sample(metrics, "oma_reconciler_records_total", { kind: "orphan", result: "reaped" }),
        ).toBeGreaterThanOrEqual(1);
        expect(sample(metrics, "oma_orphans_pending")).toBe(0);
      } finally {
        expect(await second.stop()).toBe(0);
      }
      expect(mine(json<Listing>((await stack.run(["orphans", "--json"])).stdout))).toEqual([]);
    } finally {
      await proxy.close();
    }
  });

  it("lists work in flight and a session's fences, and sweeps a session's checkpoints keeping what is published", async () => {
    const service = stack.start();
    const session = stack.plane.createSession({
      environmentId: stack.environment.id,
      title: "sweep",
    });
    try {
      stack.plane.queueTurn(session.id, {
        message: "write",
        toolCalls: [
          {
            name: "bash",
            input: {
              command: "head -c 1000000 /dev/urandom > a.bin; sha256sum a.bin > sums; sleep 2",
            },
          },
        ],
        finalMessage: "ok",
      });
      await service.waitFor("sandbox.acquired");
      const inFlight = json<{ inFlight: { sessionId: string; held: boolean }[] }>(
        (await stack.run(["in-flight", "--json"])).stdout,
      );
      expect(inFlight.inFlight.map((row) => row.sessionId)).toContain(session.id);
      await service.waitFor("work.done", (line) => line.sessionId === session.id);
      stack.plane.queueTurn(session.id, {
        message: "change",
        toolCalls: [
          {
            name: "bash",
            input: {
              command: "sha256sum -c sums && rm a.bin && head -c 100000 /dev/urandom > b.bin",
            },
          },
        ],
        finalMessage: "ok",
      });
      await service.waitFor(
        "work.done",
        (line) =>
          line.sessionId === session.id &&
          line.workId !==
            service.lines.find((l) => l.event === "work.done" && l.sessionId === session.id)
              ?.workId,
      );
    } finally {
      expect(await service.stop()).toBe(0);
    }
    const fences = json<{
      fences: { sessionId: string; held: boolean; revision: number; checkpointId: string | null }[];
    }>((await stack.run(["fences", session.id, "--json"])).stdout);
    expect(fences.fences).toHaveLength(1);
    expect(fences.fences[0]).toMatchObject({ sessionId: session.id, held: false, revision: 2 });
    expect(fences.fences[0]?.checkpointId).toBeTruthy();
    expect((await stack.run(["in-flight", "--json"])).stdout).not.toContain(session.id);

    const checkpoints = json<{ published: { checkpointId: string }[] }>(
      (await stack.run(["checkpoints", session.id, "--json"])).stdout,
    );
    expect(checkpoints.published.map((handle) => handle.checkpointId)).toEqual([
      fences.fences[0]?.checkpointId,
    ]);
    // Grace 0: every object no published checkpoint references goes: turn 1's a.bin, a blob of its own
    // (over the pack threshold), is referenced no more.
    const swept = await stack.run(["checkpoints", session.id, "--sweep", "--json"], {
      OMA_SWEEP_GRACE_MS: "0",
    });
    expect(swept.code).toBe(0);
    const result = json<{ deleted: number; kept: number }>(swept.stdout);
    expect(result.deleted).toBeGreaterThan(0);
    expect(result.kept).toBeGreaterThan(0);
    const again = json<{ deleted: number }>(
      (
        await stack.run(["checkpoints", session.id, "--sweep", "--json"], {
          OMA_SWEEP_GRACE_MS: "0",
        })
      ).stdout,
    );
    expect(again.deleted).toBe(0);

    // What the sweep kept restores: a third turn sees turn 2's tree.
    const next = stack.start();
    try {
      stack.plane.queueTurn(session.id, {
        message: "list",
        toolCalls: [{ name: "bash", input: { command: "ls; test ! -e a.bin && wc -c < b.bin" } }],
        finalMessage: "ok",
      });
      const done = await next.waitFor("work.done", (line) => line.sessionId === session.id);
      expect(done.outcome).toBe("completed");
      expect(transcriptText(session.id)).toContain("100000");
    } finally {
      expect(await next.stop()).toBe(0);
    }
  });
});
