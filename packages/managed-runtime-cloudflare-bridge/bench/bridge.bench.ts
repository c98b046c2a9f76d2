/**
 * `pnpm bench:bridge`: checkpoints and restores a generated workspace through the local bridge stack into
 * the fs blob store, and measures what the bridge itself allows for the same bytes (curl file GETs and
 * `/hydrate` of 8 MiB parts, one `/persist`), plus GNU tar on the host. Prints figures, no assertions.
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { loadavg } from "node:os";
import { join } from "node:path";
import type { BlobStore } from "@open-managed-agents/blob-store";
import { createFsBlobStore } from "@open-managed-agents/blob-store/fs";
import { type LocalBridge, startLocalBridge } from "@open-managed-agents/local-container";
import { type BridgeClient, createBridgeClient } from "../src/wire/bridge-client.js";
import { readBenchConfig } from "./bench-config.js";
import { type ChildEnvironment, runDriverChild } from "./child-protocol.js";
import { hostTarReference } from "./host-tar.js";
import { type PersistAttempt, combineTransfers, rawFileGets, rawHydrates, rawPersist, writeHydrateParts } from "./raw-bridge.js";
import { type LoadWindows, formatReport } from "./report.js";
import { sandboxShell, timed } from "./sandbox-shell.js";
import { MANIFEST_SCRIPT, MEASURE_SCRIPT, workspacePlan } from "./workspace-generator.js";

const PART_BYTES = 8 * 1024 * 1024;
const SOURCE_MARKER = "bench-source-sandbox";

const log = (message: string) => process.stderr.write(`[bench:bridge] ${message}\n`);
const rate = (bytes: number, seconds: number) => `${seconds.toFixed(1)} s, ${(bytes / 1e6 / seconds).toFixed(1)} MB/s`;

/** What every phase needs. */
interface BenchContext {
  readonly bridge: LocalBridge;
  readonly client: BridgeClient;
  readonly endpoint: { readonly url: string; readonly apiKey: string };
  readonly child: ChildEnvironment;
  readonly store: BlobStore;
  readonly scratch: string;
  /** One-minute load average at the start and end of each measured phase: the host is shared. */
  readonly loads: LoadWindows;
}

async function measured<T>(context: BenchContext, phase: string, step: () => Promise<T>): Promise<T> {
  const start = loadavg()[0] ?? 0;
  const value = await step();
  context.loads[phase] = [start, loadavg()[0] ?? 0];
  return value;
}

/** Driver checkpoint, bracketed by curl GETs of the even parts before and the odd parts after. */
async function checkpointPhase(context: BenchContext, source: string) {
  const { client, endpoint } = context;
  log("raw: tar | split in the sandbox, curl GET of the even parts");
  const before = await measured(context, "raw GET", () => rawFileGets(client, endpoint, { sandboxId: source, partBytes: PART_BYTES, select: (index) => index % 2 === 0 }));
  log("driver: checkpoint");
  const checkpoint = await measured(context, "driver checkpoint", () => runDriverChild(context.child, ["checkpoint", source]));
  if (!checkpoint.handle) throw new Error("the checkpoint child returned no handle");
  const metadata = checkpoint.handle.metadata as { blobKey: string; size: number };
  log(`driver checkpoint: ${rate(metadata.size, checkpoint.elapsedMs / 1000)}; raw: curl GET of the odd parts`);
  const after = await rawFileGets(client, endpoint, { sandboxId: source, partBytes: PART_BYTES, select: (index) => index % 2 === 1 });
  const rawGets = { ...combineTransfers(before, after), archiveMs: (before.archiveMs + after.archiveMs) / 2 };
  log(`raw GET: ${rate(rawGets.bytes, rawGets.seconds)}`);
  return { checkpoint, handle: checkpoint.handle, metadata, rawGets };
}

/** Driver restore into a fresh sandbox, verified, bracketed by curl `/hydrate` of the even and the odd parts. */
async function restorePhase(context: BenchContext, input: Awaited<ReturnType<typeof checkpointPhase>>, manifest: string) {
  const { client, endpoint } = context;
  const hostDirectory = join(context.scratch, "hydrate-parts");
  await mkdir(hostDirectory, { recursive: true });
  const parts = await writeHydrateParts({ store: context.store, blobKey: input.metadata.blobKey, partBytes: PART_BYTES, hostDirectory });
  log("raw: curl /hydrate of the even parts");
  const before = await measured(context, "raw hydrate", () => rawHydrates(client, endpoint, parts.filter((_, index) => index % 2 === 0)));
  log("driver: restore into a fresh sandbox");
  const restore = await measured(context, "driver restore", () => runDriverChild(context.child, ["restore", JSON.stringify(input.handle)]));
  const restored = restore.runtimeId ?? "";
  const [, after = ""] = (await sandboxShell(client, restored, MANIFEST_SCRIPT)).trim().split(" ");
  await client.destroy(restored);
  const verified = manifest !== "" && manifest === after;
  log(`driver restore: ${rate(input.metadata.size, restore.elapsedMs / 1000)}, tree ${verified ? "verified" : "DIFFERS"}; raw: curl /hydrate of the odd parts`);
  const hydrated = combineTransfers(before, await rawHydrates(client, endpoint, parts.filter((_, index) => index % 2 === 1)));
  log(`raw hydrate: ${rate(hydrated.bytes, hydrated.seconds)}`);
  await rm(hostDirectory, { recursive: true, force: true });
  return { restore, verified, rawHydrates: hydrated };
}

async function run(context: BenchContext, workspaceMiB: number, persistTimeoutSeconds: number, started: number): Promise<string> {
  const { client } = context;
  const plan = workspacePlan(workspaceMiB);
  const source = await client.create();
  try {
    log(`generating ${workspaceMiB} MiB in sandbox /workspace`);
    const generated = await timed(() => sandboxShell(client, source, `${plan.script}\ntouch /tmp/${SOURCE_MARKER}`));
    log(`generated in ${(generated.ms / 1000).toFixed(1)} s`);
    const workspaceBytes = Number((await sandboxShell(client, source, MEASURE_SCRIPT)).trim());
    const [entries = "0", manifest = ""] = (await sandboxShell(client, source, MANIFEST_SCRIPT)).trim().split(" ");
    log("driver: idle baseline");
    const idle = await runDriverChild(context.child, ["idle"]);
    const checkpointed = await checkpointPhase(context, source);
    const restored = await restorePhase(context, checkpointed, manifest);

    log("GNU tar on the host tree");
    const container = context.bridge.containerServer.containers.list().find((candidate) => existsSync(join(candidate.mounts["/tmp"] ?? "", SOURCE_MARKER)));
    const hostTar = container ? await hostTarReference(container.mounts["/workspace"] ?? "", context.scratch) : null;
    let persist: PersistAttempt | null = null;
    if (persistTimeoutSeconds > 0) {
      // Last: a failing /persist may take the local bridge's memory with it.
      log(`single /persist of the whole workspace (limit ${persistTimeoutSeconds} s)`);
      persist = await rawPersist(context.endpoint, source, { expectedBytes: checkpointed.metadata.size, maxSeconds: persistTimeoutSeconds });
    }
    return formatReport({
      plan,
      workspaceBytes,
      archiveBytes: checkpointed.metadata.size,
      entries: Number(entries),
      verified: restored.verified,
      idle,
      checkpoint: checkpointed.checkpoint,
      restore: restored.restore,
      rawGets: checkpointed.rawGets,
      rawHydrates: restored.rawHydrates,
      persist,
      hostTar,
      loads: context.loads,
      totalSeconds: (performance.now() - started) / 1000,
    });
  } finally {
    await client.destroy(source).catch(() => undefined);
  }
}

async function main(): Promise<void> {
  const config = readBenchConfig();
  const started = performance.now();
  const scratch = await mkdtemp("/var/tmp/oma-bridge-bench-");
  const storeDir = join(scratch, "store");
  const spoolDir = join(scratch, "spool");
  await Promise.all([storeDir, spoolDir].map((directory) => mkdir(directory, { recursive: true })));
  log("starting the local bridge (workerd + local container server)");
  const bridge = await startLocalBridge();
  try {
    const context: BenchContext = {
      bridge,
      client: createBridgeClient({ baseUrl: bridge.url, apiKey: bridge.apiKey }),
      endpoint: { url: bridge.url, apiKey: bridge.apiKey },
      child: { bridgeUrl: bridge.url, apiKey: bridge.apiKey, storeDir, spoolDir },
      store: createFsBlobStore({ rootDir: storeDir }),
      scratch,
      loads: {},
    };
    process.stdout.write(`${await run(context, config.workspaceMiB, config.persistTimeoutSeconds, started)}\n`);
  } finally {
    await bridge.stop().catch((error: unknown) => log(`stopping the local bridge failed: ${String(error)}`));
    await rm(scratch, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:bridge failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
