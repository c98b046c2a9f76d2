import Anthropic from "@anthropic-ai/sdk";
import {
  type WorkItemReport,
  createManagedEnvironmentWorker,
} from "@open-managed-agents/managed-environment-worker";
import {
  applyMigrations,
  createD1SqlClient,
  createManagedRuntimeHost,
  createSqlFencePort,
  createSqlOrphanPort,
  resolveManagedRuntimePlan,
} from "@open-managed-agents/managed-runtime-host";
import type { ManagedRuntimeProfile } from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it } from "vitest";
import { createCloudflareManagedRuntimeDriver } from "../../src/index.js";
import {
  TEST_RUNTIME_ENVIRONMENT,
  createSandbox,
  expectNoContainerOutlivesItsRun,
  testEnv,
} from "./fixtures.js";

/** The local control plane's admin API (not part of the platform): environments, sessions, scripted turns. */
async function admin<T>(path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${testEnv.OMA_TEST_CONTROL_PLANE_URL}/admin/v1${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: {
      authorization: `Bearer ${testEnv.OMA_TEST_CONTROL_PLANE_ADMIN_TOKEN}`,
      "content-type": "application/json",
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!response.ok)
    throw new Error(`admin ${path} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as T;
}

function amaWorkerProfile(): ManagedRuntimeProfile {
  return {
    workspace: { requirement: "durable" },
    outputs: { requirement: "disabled" },
    runtimeCheckpoint: "disabled",
    driver: {
      type: "ama_worker",
      process: {
        command: "oma-ama-worker",
        env: {
          PATH: `${testEnv.OMA_TEST_AMA_WORKER_BIN_DIR}:/usr/local/bin:/usr/bin:/bin`,
          OMA_AMA_MAX_IDLE_MS: "800",
        },
      },
    },
  };
}

expectNoContainerOutlivesItsRun();

describe("claimed work through the Cloudflare SDK driver in workerd", () => {
  it("claims two turns with the SDK, runs the AMA worker in the Sandbox Durable Object's container, restores turn 1's workspace in turn 2", async () => {
    const environment = await admin<{ id: string; environment_key: string }>("/environments", {
      name: "workerd",
    });
    const session = await admin<{ id: string }>("/sessions", { environment_id: environment.id });
    await admin(`/sessions/${session.id}/turns`, {
      tool_calls: [
        { name: "bash", input: { command: "echo from-turn-1 > /workspace/notes.txt && pwd" } },
      ],
    });
    await admin(`/sessions/${session.id}/turns`, {
      tool_calls: [{ name: "read", input: { file_path: "/workspace/notes.txt" } }],
    });

    const sql = createD1SqlClient(testEnv.VAULT_DB);
    await applyMigrations(sql);
    const fences = createSqlFencePort({ client: sql });
    const orphans = createSqlOrphanPort({ client: sql });
    const driver = createCloudflareManagedRuntimeDriver(testEnv, {
      createSandbox,
      runtimeEnvironment: TEST_RUNTIME_ENVIRONMENT,
    });
    const reports: WorkItemReport[] = [];
    const worker = createManagedEnvironmentWorker({
      client: new Anthropic({
        baseURL: testEnv.OMA_TEST_CONTROL_PLANE_URL,
        apiKey: null,
        authToken: null,
      }),
      environmentId: environment.id,
      environmentKey: environment.environment_key,
      workspaceId: "ws-workerd",
      profileFor: () => amaWorkerProfile(),
      async host({ profile }) {
        const plan = resolveManagedRuntimePlan(profile, driver.descriptor().capabilities);
        const { supervisorTransport: _transport, ...resources } = await driver.create({
          environmentId: environment.id,
          placement: "in_process",
          profile,
          plan,
          providerConfig: {},
        });
        return createManagedRuntimeHost({
          ownerId: "workerd-env-worker",
          leaseTtlMs: 60_000,
          heartbeatIntervalMs: 10_000,
          fences,
          orphans,
          ...resources,
        });
      },
      onRunResult: (report) => void reports.push(report),
    });
    // Turn 2's item is queued once the AMA worker stopped turn 1's; the second pass claims it.
    while (reports.length < 2) await worker.drain();

    expect(
      reports.map((report) =>
        report.outcome.type === "ran" ? report.outcome.result.type : report.outcome.type,
      ),
    ).toEqual(["completed", "completed"]);
    const transcript = await admin<{
      entries: { name: string; result: { content: unknown[] } | null }[];
    }>(`/sessions/${session.id}/transcript`);
    expect(transcript.entries.map((entry) => entry.name)).toEqual(["bash", "read"]);
    expect(JSON.stringify(transcript.entries[0]?.result?.content)).toContain("/workspace");
    expect(JSON.stringify(transcript.entries[1]?.result?.content)).toContain("from-turn-1");
  });
});
