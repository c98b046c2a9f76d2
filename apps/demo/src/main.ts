import { rm } from "node:fs/promises";
import { createCloudflareBridgeManagedRuntime } from "@open-managed-agents/managed-runtime-cloudflare-bridge";
import { createManagedRuntimeHost, createManagedRuntimeProviderRegistry } from "@open-managed-agents/managed-runtime-host";
import { CHECKPOINT_METADATA_KEY, readOutputManifest } from "@open-managed-agents/managed-runtime-sandbox";
import {
  type ManagedRuntimeProfile,
  type RuntimeResourceScope,
  type SessionOutputManifestCandidate,
  type WorkspaceCheckpointCandidate,
  parseSandboxCheckpointHandle,
} from "@open-managed-agents/runtime-resource-contract";
import { openDemoEnvironment } from "./environment.js";
import { formatBytes, say } from "./format.js";
import { instrument } from "./instrument.js";
import { openSqliteStores } from "./stores.js";
import { firstWorkItem, secondWorkItem } from "./work-items.js";

const PROGRESS_STEP_BYTES = 4 * 1024 * 1024;

async function main(): Promise<number> {
  const dataMiB = Number.parseInt(process.env.OMA_DEMO_DATA_MIB ?? "24", 10);
  say("open-managed-agents demo: two work items of one session through the fenced host");
  const environment = await openDemoEnvironment(process.env);
  const stores = await openSqliteStores(environment.workDirectory);
  say(`  bridge   ${environment.bridgeDescription}`);
  say(`  fences   SQLite ${stores.path} (migrations: ${stores.applied.join(", ") || "already applied"})`);
  say(`  blobs    ${environment.storeDescription}`);
  try {
    let lastReported = 0;
    const driver = createCloudflareBridgeManagedRuntime({
      baseUrl: environment.bridgeUrl,
      apiKey: environment.apiKey,
      checkpointStore: environment.store,
      outputStore: environment.store,
      onProgress: ({ phase, bytes, totalBytes }) => {
        if (bytes - lastReported < PROGRESS_STEP_BYTES && bytes !== totalBytes) return;
        lastReported = bytes;
        const total = totalBytes ? ` of ~${formatBytes(totalBytes)}` : "";
        say(`      ${phase} transfer ${formatBytes(bytes)}${total}`);
      },
    });
    const registry = createManagedRuntimeProviderRegistry({ drivers: [driver] });
    const sessionId = `demo-session-${Date.now().toString(36)}`;
    const items: [string, ManagedRuntimeProfile][] = [
      ["work-1", firstWorkItem(dataMiB)],
      ["work-2", secondWorkItem()],
    ];
    for (const [workId, profile] of items) {
      lastReported = 0;
      const scope: RuntimeResourceScope = { workspaceId: "demo-workspace", environmentId: "demo-environment", sessionId, workId };
      if (!(await runWorkItem(registry, stores, environment, scope, profile))) return 1;
    }
    say();
    say("done: the second work item found the first one's workspace, restored from its checkpoint.");
    return 0;
  } finally {
    stores.close();
    await environment.stop();
    if (!process.env.OMA_DEMO_KEEP) await rm(environment.workDirectory, { recursive: true, force: true });
  }
}

async function runWorkItem(
  registry: ReturnType<typeof createManagedRuntimeProviderRegistry>,
  stores: Awaited<ReturnType<typeof openSqliteStores>>,
  environment: Awaited<ReturnType<typeof openDemoEnvironment>>,
  scope: RuntimeResourceScope,
  profile: ManagedRuntimeProfile,
): Promise<boolean> {
  say();
  say(`work item ${scope.workId} of ${scope.sessionId}`);
  const prepared = await registry.prepare({ provider: "cloudflare-bridge", placement: "driver_service", scope, profile, providerConfig: {} });
  let checkpoint: WorkspaceCheckpointCandidate | null = null;
  let manifest: SessionOutputManifestCandidate | null = null;
  const observe = (call: string, result: unknown) => {
    if (call === "workspace.checkpoint") checkpoint = result as WorkspaceCheckpointCandidate;
    if (call === "outputs.finalize") manifest = result as SessionOutputManifestCandidate;
  };
  const { resources } = prepared;
  const host = createManagedRuntimeHost({
    ownerId: "demo-host",
    leaseTtlMs: 120_000,
    heartbeatIntervalMs: 30_000,
    fences: instrument("fence", stores.fences),
    orphans: instrument("orphans", stores.orphans),
    sandbox: instrument("sandbox", resources.sandbox),
    workspace: instrument("workspace", resources.workspace, observe),
    outputs: instrument("outputs", resources.outputs, observe),
    harnessDriver: instrument("harness", resources.harnessDriver),
  });
  const started = performance.now();
  const result = await host.run({ scope, profile });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  if (result.type !== "completed") {
    const detail = result.type === "conflict" ? `fence held until ${result.expiresAt}` : `${result.error.code}: ${result.error.message}`;
    say(`  result   ${result.type} after ${seconds} s (${detail})`);
    return false;
  }
  say(`  result   completed in ${seconds} s, session revision ${result.revision}, generation ${result.generation}`);
  for (const error of result.cleanupErrors) say(`  cleanup  ${error.code}: ${error.message}`);
  printCheckpoint(checkpoint);
  if (manifest) await printManifest(environment, manifest);
  return true;
}

function printCheckpoint(candidate: WorkspaceCheckpointCandidate | null): void {
  if (!candidate) return;
  const handleJson = candidate.metadata?.[CHECKPOINT_METADATA_KEY];
  const handle = typeof handleJson === "string" ? parseSandboxCheckpointHandle(JSON.parse(handleJson)) : null;
  const size = handle?.metadata?.size;
  say(`  checkpoint ${candidate.id}: archive ${handle?.checkpointId ?? "?"}${typeof size === "number" ? ` (${formatBytes(size)})` : ""}`);
}

async function printManifest(environment: Awaited<ReturnType<typeof openDemoEnvironment>>, candidate: SessionOutputManifestCandidate): Promise<void> {
  const manifest = await readOutputManifest(environment.store, candidate);
  say(`  outputs  manifest ${candidate.id} with ${manifest.entries.length} entries`);
  for (const entry of manifest.entries) say(`           ${entry.logicalPath.padEnd(20)} ${formatBytes(entry.size).padStart(10)}  ${entry.contentHash}`);
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`demo failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
