import { rm } from "node:fs/promises";
import Anthropic from "@anthropic-ai/sdk";
import { VERSION as SDK_VERSION } from "@anthropic-ai/sdk/version";
import { type LocalControlPlane, startLocalControlPlane } from "@open-managed-agents/local-control-plane";
import { createCloudflareBridgeManagedRuntime } from "@open-managed-agents/managed-runtime-cloudflare-bridge";
import { type WorkItemReport, createManagedEnvironmentWorker } from "@open-managed-agents/managed-environment-worker";
import { createManagedRuntimeHost, createManagedRuntimeProviderRegistry } from "@open-managed-agents/managed-runtime-host";
import { CHECKPOINT_METADATA_KEY, HARNESS_VERSION_METADATA_KEY, readOutputManifest } from "@open-managed-agents/managed-runtime-sandbox";
import {
  type ManagedSandboxLease,
  type SessionOutputManifestCandidate,
  type WorkspaceCheckpointCandidate,
  parseSandboxCheckpointHandle,
} from "@open-managed-agents/runtime-resource-contract";
import { type DemoEnvironment, UnconfinedRuntimeError, openDemoEnvironment } from "./environment.js";
import { formatBytes, say } from "./format.js";
import { instrument } from "./instrument.js";
import { openSqliteStores } from "./stores.js";
import { printTranscript } from "./transcript.js";
import { amaWorkerProfile, firstTurn, secondTurn } from "./turns.js";

const PROGRESS_STEP_BYTES = 4 * 1024 * 1024;

async function main(): Promise<number> {
  const dataMiB = Number.parseInt(process.env.OMA_DEMO_DATA_MIB ?? "24", 10);
  say("open-managed-agents demo: one session, two user turns, as claimed work through the environment worker and the fenced host");
  const plane = await startLocalControlPlane();
  const environment = await openDemoEnvironment(process.env, plane.url).catch(async (error: unknown) => {
    await plane.stop();
    throw error;
  });
  const stores = await openSqliteStores(environment.workDirectory);
  say(`  control  local control plane at ${plane.url} (stand-in for Anthropic Managed Agents: Work API, sessions, scripted agent turns)`);
  say(`  bridge   ${environment.bridgeDescription}`);
  say(`  fences   SQLite ${stores.path} (migrations: ${stores.applied.join(", ") || "already applied"})`);
  say(`  blobs    ${environment.storeDescription}`);
  say(`  sandbox  oma-ama-worker from ${environment.binDirectory} (the SDK's EnvironmentWorker.handleItem)`);
  try {
    const managed = plane.createEnvironment({ name: "demo" });
    const session = plane.createSession({ environmentId: managed.id, title: "demo session" });
    const turns = [
      plane.queueTurn(session.id, { message: "write some files", toolCalls: firstTurn(dataMiB), finalMessage: "files written" }),
      plane.queueTurn(session.id, { message: "read them back", toolCalls: secondTurn(), finalMessage: "files verified" }),
    ];
    say(`  session  ${session.id} with turns ${turns.map((turn) => turn.id).join(", ")}`);
    const reports = await runWorker(environment, stores, plane, managed, turns.length);
    const turnOf = (turnId: string) => turns.findIndex((turn) => turn.id === turnId) + 1;
    printTranscript(plane, session.id, turnOf);
    const allCompleted = reports.every((report) => report.outcome.type === "ran" && report.outcome.result.type === "completed");
    const verified = plane.transcript(session.id).entries.some((entry) => JSON.stringify(entry.result?.content ?? []).includes("data.bin: OK"));
    say();
    if (!allCompleted || !verified) {
      say("failed: a turn did not complete, or turn 2 did not find turn 1's files");
      return 1;
    }
    say("done: turn 2's agent read back turn 1's files, restored in a new sandbox from the checkpoint the host published.");
    return 0;
  } finally {
    await plane.stop();
    stores.close();
    await environment.stop();
    if (!process.env.OMA_DEMO_KEEP) await rm(environment.workDirectory, { recursive: true, force: true });
  }
}

async function runWorker(
  environment: DemoEnvironment,
  stores: Awaited<ReturnType<typeof openSqliteStores>>,
  plane: LocalControlPlane,
  managed: { id: string; environmentKey: string },
  expected: number,
): Promise<WorkItemReport[]> {
  let lastReported = 0;
  let checkpoint: WorkspaceCheckpointCandidate | null = null;
  let manifest: SessionOutputManifestCandidate | null = null;
  let started = 0;
  const observe = (call: string, result: unknown) => {
    if (call === "workspace.checkpoint") checkpoint = result as WorkspaceCheckpointCandidate;
    if (call === "outputs.finalize") manifest = result as SessionOutputManifestCandidate;
    const harness = call === "sandbox.acquire" ? (result as ManagedSandboxLease).metadata?.[HARNESS_VERSION_METADATA_KEY] : undefined;
    if (typeof harness === "string") say(`      worker  ${harness} (the lease's record of the bin the sandbox runs)`);
  };
  const driver = createCloudflareBridgeManagedRuntime({
    baseUrl: environment.bridgeUrl,
    apiKey: environment.apiKey,
    checkpointStore: environment.store,
    outputStore: environment.store,
    onProgress: ({ phase, bytes, totalBytes }) => {
      if (bytes - lastReported < PROGRESS_STEP_BYTES && bytes !== totalBytes) return;
      lastReported = bytes;
      say(`      ${phase} transfer ${formatBytes(bytes)}${totalBytes ? ` of ~${formatBytes(totalBytes)}` : ""}`);
    },
  });
  const registry = createManagedRuntimeProviderRegistry({ drivers: [driver] });
  const reports: WorkItemReport[] = [];
  const controller = new AbortController();
  // The worker's own client: the environment key is all it holds (no Anthropic API key).
  const client = new Anthropic({ baseURL: plane.url, apiKey: null, authToken: null });
  const worker = createManagedEnvironmentWorker({
    client,
    environmentId: managed.id,
    environmentKey: managed.environmentKey,
    workspaceId: "demo-workspace",
    profileFor: () => amaWorkerProfile(environment.binDirectory),
    fallbackPollIntervalMs: 2_000,
    async host({ scope, profile }) {
      say();
      say(`work item ${scope.workId} of ${scope.sessionId} (claimed with the SDK's WorkPoller, @anthropic-ai/sdk ${SDK_VERSION})`);
      lastReported = 0;
      checkpoint = null;
      manifest = null;
      started = performance.now();
      const { resources } = await registry.prepare({ provider: "cloudflare-bridge", placement: "driver_service", scope, profile, providerConfig: {} });
      return createManagedRuntimeHost({
        ownerId: "demo-host",
        leaseTtlMs: 120_000,
        heartbeatIntervalMs: 30_000,
        fences: instrument("fence", stores.fences),
        orphans: instrument("orphans", stores.orphans),
        sandbox: instrument("sandbox", resources.sandbox, observe),
        workspace: instrument("workspace", resources.workspace, observe),
        outputs: instrument("outputs", resources.outputs, observe),
        harnessDriver: instrument("harness", resources.harnessDriver),
      });
    },
    async onRunResult(report) {
      reports.push(report);
      await printReport(environment, report, (performance.now() - started) / 1000, checkpoint, manifest);
      if (reports.length >= expected || report.outcome.type !== "ran" || report.outcome.result.type !== "completed") controller.abort();
    },
  });
  await worker.run(controller.signal);
  return reports;
}

async function printReport(
  environment: DemoEnvironment,
  report: WorkItemReport,
  seconds: number,
  checkpoint: WorkspaceCheckpointCandidate | null,
  manifest: SessionOutputManifestCandidate | null,
): Promise<void> {
  const { outcome } = report;
  if (outcome.type !== "ran") {
    say(`  result   ${outcome.type}${outcome.type === "rejected" ? ` (${outcome.error.code}: ${outcome.error.message})` : ""}`);
    return;
  }
  const result = outcome.result;
  const retries = outcome.attempts > 1 ? `, after ${outcome.attempts - 1} conflict retries` : "";
  if (result.type !== "completed") {
    const detail = result.type === "conflict" ? `fence held until ${result.expiresAt}` : `${result.error.code}: ${result.error.message}`;
    say(`  result   ${result.type} after ${seconds.toFixed(1)} s (${detail})`);
    return;
  }
  say(`  result   completed in ${seconds.toFixed(1)} s, session revision ${result.revision}, generation ${result.generation}${retries}`);
  for (const error of result.cleanupErrors) say(`  cleanup  ${error.code}: ${error.message}`);
  printCheckpoint(checkpoint);
  if (manifest) {
    const read = await readOutputManifest(environment.store, manifest);
    say(`  outputs  manifest ${(manifest as SessionOutputManifestCandidate).id} with ${read.entries.length} entries`);
    for (const entry of read.entries) say(`           ${entry.logicalPath.padEnd(20)} ${formatBytes(entry.size).padStart(10)}  ${entry.contentHash}`);
  }
}

function printCheckpoint(candidate: WorkspaceCheckpointCandidate | null): void {
  if (!candidate) return;
  const handleJson = candidate.metadata?.[CHECKPOINT_METADATA_KEY];
  const handle = typeof handleJson === "string" ? parseSandboxCheckpointHandle(JSON.parse(handleJson)) : null;
  const size = handle?.metadata?.size;
  say(`  checkpoint ${candidate.id}: archive ${handle?.checkpointId ?? "?"}${typeof size === "number" ? ` (${formatBytes(size)})` : ""}`);
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (UnconfinedRuntimeError.isInstance(error)) {
      process.stderr.write(`demo refused: ${error.message}\n`);
      process.exit(2);
    }
    process.stderr.write(`demo failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
