import Database from "better-sqlite3";
import {
  createBetterSqliteClient,
  createSqlFencePort,
} from "@open-managed-agents/managed-runtime-host";
import type { RuntimeResourcePublication } from "@open-managed-agents/runtime-resource-contract";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServiceStack, startServiceStack } from "./support/service-stack.js";

let stack: ServiceStack;

beforeAll(async () => {
  stack = await startServiceStack();
});

afterAll(async () => {
  await stack?.close();
});

// Tool calls print computed markers (`$((40 + 2))`), since the transcript also holds each call's command.
// A short fence, so a killed worker's turn is seen as abandoned soon (still well above a loaded machine's
// heartbeat delays). The killed turn's second call outlasts the time the test takes to kill and ends well
// before the fence expires, so the in-sandbox worker finishes the turn and stops the item, as the platform
// sees it in production. The reconciler runs only when the test runs it (the operator's `reap`).
const SERVICE = {
  OMA_LEASE_TTL_MS: "20000",
  OMA_FENCE_HEARTBEAT_MS: "2000",
  OMA_RECONCILE_INTERVAL_MS: "3600000",
};

const transcriptText = (sessionId: string) => JSON.stringify(stack.plane.transcript(sessionId));
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const waitUntil = async (condition: () => boolean | Promise<boolean>) => {
  while (!(await condition())) await pause(200);
};
const step = (text: string) =>
  process.env.OMA_TEST_TRACE && process.stderr.write(`[salvage test] ${text}\n`);

interface ReapReport {
  readonly summary: {
    readonly journal?: {
      readonly salvaged: number;
      readonly superseded: number;
      readonly reaped: number;
      readonly held: number;
    };
  };
}

/** Runs the operator's reconciler pass until the killed run's fence expired and its record was handled. */
async function reconcile(): Promise<NonNullable<ReapReport["summary"]["journal"]>> {
  for (;;) {
    const run = await stack.run(["orphans", "--reap", "--json"], SERVICE);
    expect(run.code, run.stderr).toBe(0);
    const journal = (JSON.parse(run.stdout) as ReapReport).summary.journal;
    step(`reap: ${JSON.stringify(journal)} ${run.stderr.slice(-2000)}`);
    if (journal && journal.held === 0) return journal;
    await pause(1_000);
  }
}

/** The session's publication, read from the service's SQLite store as an observer. */
async function publicationOf(sessionId: string): Promise<RuntimeResourcePublication | null> {
  const database = new Database(stack.storePath);
  try {
    const fences = createSqlFencePort({ client: createBetterSqliteClient(database) });
    const scope = {
      workspaceId: await workspaceIdOf(database, sessionId),
      environmentId: stack.environment.id,
      sessionId,
      workId: "observer",
    };
    const acquired = await fences.acquire({ scope, ownerId: "observer", ttlMs: 1_000 });
    if (acquired.type !== "acquired") throw new Error("the session fence is still held");
    await fences.release({ fence: acquired.fence, reason: "completed" });
    return acquired.publication;
  } finally {
    database.close();
  }
}

async function workspaceIdOf(database: Database.Database, sessionId: string): Promise<string> {
  const row = database
    .prepare("SELECT workspace_id FROM runtime_resource_fences WHERE session_id = ?")
    .get(sessionId) as { workspace_id: string } | undefined;
  if (!row) throw new Error(`no fence row for ${sessionId}`);
  return row.workspace_id;
}

/**
 * Turn 1 writes `kept.txt` and completes. Turn 2 writes `killed-1.txt`, then, in a second tool call that is
 * still running when the environment worker is SIGKILLed, `killed-2.txt`. Whether the in-sandbox worker
 * goes on without it (and finishes the turn) or not, the reconciler ends it before the checkpoint.
 */
async function killMidTurn(title: string) {
  const service = stack.start(SERVICE);
  const session = stack.plane.createSession({ environmentId: stack.environment.id, title });
  stack.plane.queueTurn(session.id, {
    message: "keep",
    toolCalls: [
      { name: "bash", input: { command: "echo turn one > kept.txt && echo wrote-kept" } },
    ],
    finalMessage: "kept",
  });
  await service.waitFor("work.done", (line) => line.sessionId === session.id);
  stack.plane.queueTurn(session.id, {
    message: "the turn that loses its worker",
    toolCalls: [
      {
        name: "bash",
        input: { command: "echo first call > killed-1.txt && echo first-call-$((40 + 2))" },
      },
      {
        name: "bash",
        input: {
          command: "sleep 8; echo second call > killed-2.txt && echo second-call-$((40 + 2))",
        },
      },
    ],
    finalMessage: "finished without its worker",
  });
  step("turn 1 done");
  await waitUntil(() => transcriptText(session.id).includes("first-call-42"));
  step("first call ran; killing");
  service.child.kill("SIGKILL");
  await service.exited;
  // Killed mid-turn: only turn 1 was reported done.
  expect(
    service.lines.filter((line) => line.event === "work.done" && line.sessionId === session.id),
  ).toHaveLength(1);
  return session;
}

/** Runs one more turn in a fresh service and returns what `ls` printed in its workspace. */
async function nextTurnSees(sessionId: string): Promise<string> {
  const service = stack.start(SERVICE);
  try {
    const marker = `listing-${crypto.randomUUID()}`;
    stack.plane.queueTurn(sessionId, {
      message: "what is here",
      toolCalls: [
        {
          name: "bash",
          input: {
            command: `echo ${marker}; cat kept.txt killed-1.txt killed-2.txt 2>&1; echo end-${marker}`,
          },
        },
      ],
      finalMessage: "listed",
    });
    const done = await service.waitFor("work.done", (line) => line.sessionId === sessionId);
    expect(done.outcome).toBe("completed");
    const text = transcriptText(sessionId);
    return text.slice(text.indexOf(`${marker}\\n`), text.lastIndexOf(`end-${marker}`));
  } finally {
    expect(await service.stop()).toBe(0);
  }
}

describe("salvage of a turn whose environment worker was SIGKILLed mid-turn (ama_worker lane)", () => {
  it("publishes the killed turn's workspace, so the next turn sees its files, and reaps its sandbox", async () => {
    const session = await killMidTurn("salvaged");
    const journal = await reconcile();
    expect(journal).toMatchObject({ salvaged: 1, superseded: 0, reaped: 1 });
    const publication = await publicationOf(session.id);
    expect(publication?.revision).toBe(2);
    // The transcript and the workspace agree: every tool call the transcript reports ran left its file.
    const reported = transcriptText(session.id);
    expect(reported).toContain("first-call-42");
    const seen = await nextTurnSees(session.id);
    expect(seen).toContain("turn one");
    expect(seen).toContain("first call");
    if (reported.includes("second-call-42")) expect(seen).toContain("second call");
    step(`second call reported: ${reported.includes("second-call-42")}`);
    // The record is gone: a second pass finds nothing to do.
    expect(await reconcile()).toMatchObject({ salvaged: 0, superseded: 0, reaped: 0 });
  });

  it("salvages in the next turn's run when that turn comes before any reconciler pass", async () => {
    const session = await killMidTurn("salvaged by the next run");
    // No reconciler pass: the next turn's run takes the session's fence once the killed worker's expired,
    // salvages the killed turn's sandbox (revision 2) and restores it before its own turn (revision 3).
    const seen = await nextTurnSees(session.id);
    expect(seen).toContain("turn one");
    expect(seen).toContain("first call");
    if (transcriptText(session.id).includes("second-call-42"))
      expect(seen).toContain("second call");
    expect((await publicationOf(session.id))?.revision).toBe(3);
    // The run reaped the sandbox and resolved its record: the reconciler finds nothing left.
    expect(await reconcile()).toMatchObject({ salvaged: 0, superseded: 0, reaped: 0 });
  });

  it("publishes nothing when a newer revision was published in between, and still reaps the sandbox", async () => {
    const session = await killMidTurn("superseded");
    // Another worker's turn publishes revision 2 first (it re-publishes revision 1's workspace, as a turn
    // that changed nothing would): the salvage must not replace it.
    const database = new Database(stack.storePath);
    try {
      const fences = createSqlFencePort({ client: createBetterSqliteClient(database) });
      const scope = {
        workspaceId: await workspaceIdOf(database, session.id),
        environmentId: stack.environment.id,
        sessionId: session.id,
        workId: "another-turn",
      };
      let acquired = await fences.acquire({ scope, ownerId: "another-worker", ttlMs: 60_000 });
      while (acquired.type !== "acquired") {
        await pause(500);
        acquired = await fences.acquire({ scope, ownerId: "another-worker", ttlMs: 60_000 });
      }
      const previous = acquired.publication;
      if (!previous) throw new Error("expected revision 1");
      const published = await fences.publish({
        fence: acquired.fence,
        workspaceCandidate: previous.workspaceCandidate,
        outputCandidate: previous.outputCandidate,
      });
      expect(published).toEqual({ type: "published", revision: 2 });
      await fences.release({ fence: acquired.fence, reason: "completed" });
    } finally {
      database.close();
    }
    const journal = await reconcile();
    expect(journal).toMatchObject({ salvaged: 0, superseded: 1, reaped: 1 });
    expect((await publicationOf(session.id))?.revision).toBe(2);
    // The record is gone: a second pass finds nothing to do.
    expect(await reconcile()).toMatchObject({ salvaged: 0, superseded: 0, reaped: 0 });
    const seen = await nextTurnSees(session.id);
    expect(seen).toContain("turn one");
    expect(seen).toContain("killed-1.txt: No such file");
    expect(seen).toContain("killed-2.txt: No such file");
  });
});
