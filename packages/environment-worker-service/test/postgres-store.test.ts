import type { PostgresSqlClient } from "@open-managed-agents/managed-runtime-host";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PostgresRole, createPostgresRole, postgresAdmin } from "./support/postgres-roles.js";
import { type ServiceStack, freePort, startServiceStack } from "./support/service-stack.js";

let stack: ServiceStack;
let admin: PostgresSqlClient;
let role: PostgresRole;

beforeAll(async () => {
  stack = await startServiceStack();
  admin = postgresAdmin();
  role = await createPostgresRole(admin);
});

afterAll(async () => {
  await stack?.close();
  await role?.close();
  await admin?.close();
});

/** Neither form of the role's password (as written, percent-encoded) is in `text`. */
const expectNoPassword = (text: string) => {
  expect(text).not.toContain(role.password);
  expect(text).not.toContain(encodeURIComponent(role.password));
};

const json = <T>(text: string) => JSON.parse(text) as T;

describe("a postgres:// store", () => {
  it("--check proves it writable, naming the server and role but not the password", async () => {
    for (const scheme of ["postgres:", "postgresql:"]) {
      const url = role.url.replace(/^postgres:/, scheme);
      const result = await stack.run(["--check"], { OMA_STORE: url, OMA_LOG_LEVEL: "debug" });
      expect(result.stdout).toMatch(
        new RegExp(
          `^ok {4}store +Postgres ${scheme}//${role.name}@127\\.0\\.0\\.1:\\d+/postgres.* is writable`,
          "m",
        ),
      );
      expect(result.code).toBe(0);
      expectNoPassword(result.stdout + result.stderr);
    }
  });

  it("--check fails a read-only store with storage_unwritable, an unreachable one with unavailable", async () => {
    await role.setReadOnly(true);
    try {
      const readOnly = await stack.run(["--check"], { OMA_STORE: role.url });
      expect(readOnly.code).toBe(1);
      expect(readOnly.stdout).toMatch(
        /^FAIL {2}store +postgres:\/\/oma_\w+@127\.0\.0\.1:.*storage_unwritable/m,
      );
      expectNoPassword(readOnly.stdout + readOnly.stderr);
    } finally {
      await role.setReadOnly(false);
    }
    const nowhere = new URL(role.url);
    nowhere.port = String(await freePort());
    const unreachable = await stack.run(["--check"], { OMA_STORE: nowhere.toString() });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stdout).toMatch(
      /^FAIL {2}store +postgres:\/\/.*unavailable: Postgres is unavailable/m,
    );
    expectNoPassword(unreachable.stdout + unreachable.stderr);
    // The operator CLI's failure is typed the same and as silent about the password.
    const listing = await stack.run(["in-flight"], { OMA_STORE: nowhere.toString() });
    expect(listing.code).toBe(1);
    expect(listing.stderr).toContain("unavailable: Postgres is unavailable");
    expectNoPassword(listing.stdout + listing.stderr);
  });

  it("runs two turns of a session with the fence, journal and orphans in Postgres; the operator CLI reads them", async () => {
    const service = stack.start({ OMA_STORE: role.url, OMA_LOG_LEVEL: "debug" });
    const session = stack.plane.createSession({
      environmentId: stack.environment.id,
      title: "postgres",
    });
    try {
      const started = await service.waitFor("service.started");
      expect(started.store).toMatch(
        new RegExp(`^Postgres postgres://${role.name}@127\\.0\\.0\\.1:`),
      );
      stack.plane.queueTurn(session.id, {
        message: "write",
        toolCalls: [{ name: "bash", input: { command: "echo 'kept in postgres' > kept.txt" } }],
        finalMessage: "written",
      });
      stack.plane.queueTurn(session.id, {
        message: "read",
        toolCalls: [
          { name: "bash", input: { command: 'echo "second turn read: $(cat kept.txt)"' } },
        ],
        finalMessage: "read",
      });
      await service.waitFor(
        "work.done",
        () =>
          service.lines.filter((l) => l.event === "work.done" && l.sessionId === session.id)
            .length >= 2,
      );
      const outcomes = service.lines
        .filter((line) => line.event === "work.done" && line.sessionId === session.id)
        .map((line) => line.outcome);
      expect(outcomes).toEqual(["completed", "completed"]);
      expect(JSON.stringify(stack.plane.transcript(session.id))).toContain(
        "second turn read: kept in postgres",
      );
    } finally {
      expect(await service.stop()).toBe(0);
    }
    expectNoPassword(service.output());

    const fences = await stack.run(["fences", session.id, "--json"], { OMA_STORE: role.url });
    expect(fences.code).toBe(0);
    const [fence, ...others] = json<{
      fences: {
        held: boolean;
        revision: number;
        generation: number;
        checkpointId: string | null;
      }[];
    }>(fences.stdout).fences;
    expect(others).toEqual([]);
    expect(fence).toMatchObject({ held: false, revision: 2, generation: 2 });
    expect(fence?.checkpointId).toEqual(expect.any(String));
    const inFlight = await stack.run(["in-flight"], { OMA_STORE: role.url });
    expect(inFlight.stdout).toBe("no work in flight\n");
    const orphans = json<{ orphans: unknown[]; journal: unknown[] }>(
      (await stack.run(["orphans", "--json"], { OMA_STORE: role.url })).stdout,
    );
    expect(orphans).toEqual({ orphans: [], journal: [] });
    const checkpoints = await stack.run(["checkpoints", session.id], { OMA_STORE: role.url });
    expect(checkpoints.stdout).toContain(fence?.checkpointId);
    // The rows are the role's own, in its schema: the same tables the host's SQL stores migrate.
    const [row] = await admin.all<{ revision: number }>(
      `SELECT revision FROM ${role.name}.runtime_resource_fences WHERE session_id = ?`,
      [session.id],
    );
    expect(row?.revision).toBe(2);
  });
});
