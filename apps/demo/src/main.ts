import { rm } from "node:fs/promises";
import { join } from "node:path";
import {
  type LocalControlPlane,
  startLocalControlPlane,
} from "@open-managed-agents/local-control-plane";
import {
  type DemoEnvironment,
  UnconfinedRuntimeError,
  openDemoEnvironment,
} from "./environment.js";
import { say } from "./format.js";
import { type ItemDone, createServiceLogPrinter } from "./service-log.js";
import { serviceBinPath, startServiceProcess } from "./service-process.js";
import { printTranscript } from "./transcript.js";
import { amaWorkerProfile, firstTurn, secondTurn } from "./turns.js";

async function main(): Promise<number> {
  const dataMiB = Number.parseInt(process.env.OMA_DEMO_DATA_MIB ?? "24", 10);
  say(
    "open-managed-agents demo: one session, two user turns, as claimed work run by oma-environment-worker (the Node deployment)",
  );
  const plane = await startLocalControlPlane();
  const environment = await openDemoEnvironment(process.env, plane.url).catch(
    async (error: unknown) => {
      await plane.stop();
      throw error;
    },
  );
  say(
    `  control  local control plane at ${plane.url} (stand-in for Anthropic Managed Agents: Work API, sessions, scripted agent turns)`,
  );
  say(`  bridge   ${environment.bridgeDescription}`);
  say(`  blobs    ${environment.storeDescription}`);
  say(
    `  sandbox  oma-ama-worker from ${environment.binDirectory} (the SDK's EnvironmentWorker.handleItem)`,
  );
  try {
    const managed = plane.createEnvironment({ name: "demo" });
    const session = plane.createSession({ environmentId: managed.id, title: "demo session" });
    const turns = [
      plane.queueTurn(session.id, {
        message: "write some files",
        toolCalls: firstTurn(dataMiB),
        finalMessage: "files written",
      }),
      plane.queueTurn(session.id, {
        message: "read them back",
        toolCalls: secondTurn(),
        finalMessage: "files verified",
      }),
    ];
    say(`  session  ${session.id} with turns ${turns.map((turn) => turn.id).join(", ")}`);
    const { items, exitCode } = await runService(environment, plane, managed, turns.length);
    const turnOf = (turnId: string) => turns.findIndex((turn) => turn.id === turnId) + 1;
    printTranscript(plane, session.id, turnOf);
    const allCompleted =
      items.length === turns.length && items.every((item) => item.outcome === "completed");
    const verified = plane
      .transcript(session.id)
      .entries.some((entry) =>
        JSON.stringify(entry.result?.content ?? []).includes("data.bin: OK"),
      );
    say();
    if (!allCompleted || !verified || exitCode !== 0) {
      say(
        `failed: a turn did not complete, turn 2 did not find turn 1's files, or the service exited ${exitCode}`,
      );
      return 1;
    }
    say(
      "done: turn 2's agent read back turn 1's files, restored in a new sandbox from the checkpoint the service published.",
    );
    return 0;
  } finally {
    await plane.stop();
    await environment.stop();
    if (!process.env.OMA_DEMO_KEEP)
      await rm(environment.workDirectory, { recursive: true, force: true });
  }
}

/**
 * Runs `oma-environment-worker` configured as a deployer configures it (environment variables only), until
 * `expected` items are done or one did not complete; then SIGTERM, which lets running items end and exits 0.
 */
async function runService(
  environment: DemoEnvironment,
  plane: LocalControlPlane,
  managed: { id: string; environmentKey: string },
  expected: number,
): Promise<{ items: ItemDone[]; exitCode: number }> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    OMA_ENVIRONMENT_ID: managed.id,
    OMA_ENVIRONMENT_KEY: managed.environmentKey,
    OMA_API_BASE_URL: plane.url,
    OMA_WORKSPACE_ID: "demo-workspace",
    OMA_OWNER_ID: "demo-host",
    OMA_CLOUDFLARE_BRIDGE_URL: environment.bridgeUrl,
    OMA_CLOUDFLARE_BRIDGE_API_KEY: environment.apiKey,
    OMA_STORE: `sqlite://${join(environment.workDirectory, "runtime.sqlite")}`,
    ...(environment.checkpointStoreUrl
      ? { OMA_CHECKPOINT_STORE: environment.checkpointStoreUrl }
      : {}),
    OMA_PROFILE: JSON.stringify(amaWorkerProfile(environment.binDirectory)),
    OMA_POLL_INTERVAL_MS: "2000",
    // Debug adds a line per transaction step; the service's SDK client stays at info even so.
    OMA_LOG_LEVEL: "debug",
    OMA_LOG_FORMAT: "json",
  };
  say(`  service  ${serviceBinPath()} (oma-environment-worker, configured by OMA_* variables)`);
  const items: ItemDone[] = [];
  let stopping = false;
  const printer = createServiceLogPrinter({
    outputStore: environment.store,
    onItemDone: (item) => {
      items.push(item);
      if (!stopping && (items.length >= expected || item.outcome !== "completed")) {
        stopping = true;
        service.stop();
      }
    },
  });
  const service = startServiceProcess({ env, onLine: (line) => printer.line(line) });
  const exitCode = await service.exited;
  await printer.flushed();
  return { items, exitCode };
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (UnconfinedRuntimeError.isInstance(error)) {
      process.stderr.write(`demo refused: ${error.message}\n`);
      process.exit(2);
    }
    process.stderr.write(
      `demo failed: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(1);
  },
);
