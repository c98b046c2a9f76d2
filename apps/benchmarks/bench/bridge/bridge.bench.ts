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
import {
  type BridgeClient,
  createBridgeClient,
} from "@open-managed-agents/managed-runtime-cloudflare-bridge";
import { readBenchConfig } from "./bench-config.js";
import { type ChildEnvironment, runDriverChild } from "./child-protocol.js";
import { hostTarFile, hostTarReference } from "./host-tar.js";
import {
  type PersistAttempt,
  combineTransfers,
  rawFileGets,
  rawHydrates,
  rawPersist,
  writeHydrateParts,
} from "./raw-bridge.js";
import { type LoadWindows, formatReport } from "./report.js";
import { sandboxShell, timed } from "./sandbox-shell.js";
import {
  CHANGE_ONE_PERCENT_SCRIPT,
  MANIFEST_SCRIPT,
  MEASURE_SCRIPT,
  sourcePlan,
  workspacePlan,
} from "./workspace-generator.js";

const PART_BYTES = 8 * 1024 * 1024;
const SOURCE_MARKER = "bench-source-sandbox";

const log = (message: string) => process.stderr.write(`[bench:bridge] ${message}\n`);
const rate = (bytes: number, seconds: number) =>
  `${seconds.toFixed(1)} s, ${(bytes / 1e6 / seconds).toFixed(1)} MB/s`;

/** What every phase needs. */
interface BenchContext {
  readonly bridge: LocalBridge;
  readonly client: BridgeClient;
  readonly endpoint: { readonly url: string; readonly apiKey: string };
  readonly child: ChildEnvironment;
  readonly store: BlobStore;
  readonly scratch: string;
  /** Whether the report prints each phase's memory timeline. */
  readonly memoryTimeline: boolean;
  /** One-minute load average at the start and end of each measured phase: the host is shared. */
  readonly loads: LoadWindows;
}

async function measured<T>(
  context: BenchContext,
  phase: string,
  step: () => Promise<T>,
): Promise<T> {
  const start = loadavg()[0] ?? 0;
  const value = await step();
  context.loads[phase] = [start, loadavg()[0] ?? 0];
  return value;
}

/** Driver checkpoint, bracketed by curl GETs of the even parts before and the odd parts after. */
async function checkpointPhase(context: BenchContext, source: string, workspaceBytes: number) {
  const { client, endpoint } = context;
  log("raw: tar | split in the sandbox, curl GET of the even parts");
  const before = await measured(context, "raw GET", () =>
    rawFileGets(client, endpoint, {
      sandboxId: source,
      partBytes: PART_BYTES,
      select: (index) => index % 2 === 0,
    }),
  );
  log("driver: checkpoint");
  const checkpoint = await measured(context, "driver checkpoint", () =>
    runDriverChild(context.child, ["checkpoint", source]),
  );
  if (!checkpoint.handle) throw new Error("the checkpoint child returned no handle");
  log(
    `driver checkpoint: ${rate(workspaceBytes, checkpoint.elapsedMs / 1000)}; raw: curl GET of the odd parts`,
  );
  const after = await rawFileGets(client, endpoint, {
    sandboxId: source,
    partBytes: PART_BYTES,
    select: (index) => index % 2 === 1,
  });
  const rawGets = {
    ...combineTransfers(before, after),
    archiveMs: (before.archiveMs + after.archiveMs) / 2,
  };
  log(`raw GET: ${rate(rawGets.bytes, rawGets.seconds)}`);
  return { checkpoint, handle: checkpoint.handle, rawGets };
}

/**
 * Driver restore of `handle` into a fresh sandbox, bracketed by curl `/hydrate` of the even and the odd parts
 * of a GNU tar of the same tree, twice, each tree proved in the sandbox by the driver and then compared with
 * the source's here.
 */
async function restorePhase(
  context: BenchContext,
  handle: unknown,
  manifest: string,
  tarFile: string,
  workspaceBytes: number,
) {
  const { client, endpoint } = context;
  const hostDirectory = join(context.scratch, "hydrate-parts");
  await mkdir(hostDirectory, { recursive: true });
  const parts = await writeHydrateParts({
    archive: { file: tarFile },
    partBytes: PART_BYTES,
    hostDirectory,
  });
  log("raw: curl /hydrate of the even parts");
  const before = await measured(context, "raw hydrate", () =>
    rawHydrates(
      client,
      endpoint,
      parts.filter((_, index) => index % 2 === 0),
    ),
  );
  const restoreInto = async (mode: "restore", phase: string) => {
    log(`driver: ${phase} into a fresh sandbox`);
    const result = await measured(context, phase, () =>
      runDriverChild(context.child, [mode, JSON.stringify(handle)]),
    );
    const restored = result.runtimeId ?? "";
    const [, after = ""] = (await sandboxShell(client, restored, MANIFEST_SCRIPT))
      .trim()
      .split(" ");
    await client.destroy(restored);
    const same = manifest !== "" && manifest === after;
    log(
      `${phase}: ${rate(workspaceBytes, result.elapsedMs / 1000)}, tree ${same ? "verified" : "DIFFERS"}`,
    );
    return { result, same };
  };
  // Twice: the shared host's load drifts through a run. Every restore is proved in the sandbox.
  const checked = await restoreInto("restore", "driver restore");
  const checkedAgain = await restoreInto("restore", "driver restore, again");
  const restore = checked.result;
  const verified = [checked, checkedAgain].every((run) => run.same);
  log("raw: curl /hydrate of the odd parts");
  const hydrated = combineTransfers(
    before,
    await rawHydrates(
      client,
      endpoint,
      parts.filter((_, index) => index % 2 === 1),
    ),
  );
  log(`raw hydrate: ${rate(hydrated.bytes, hydrated.seconds)}`);
  await rm(hostDirectory, { recursive: true, force: true });
  return {
    restore,
    restoreAgain: checkedAgain.result,
    verified,
    rawHydrates: hydrated,
  };
}

async function run(
  benchContext: BenchContext,
  kind: "random" | "source",
  workspaceMiB: number,
  persistTimeoutSeconds: number,
  started: number,
): Promise<string> {
  // A session of its own: its first checkpoint is the session's first, whatever ran before in this store.
  const context: BenchContext = {
    ...benchContext,
    child: { ...benchContext.child, sessionId: `bench-${kind}-${crypto.randomUUID()}` },
  };
  const { client } = context;
  const plan = kind === "source" ? sourcePlan(workspaceMiB) : workspacePlan(workspaceMiB);
  const source = await client.create();
  for (const phase of Object.keys(context.loads)) delete context.loads[phase];
  try {
    log(`generating ${workspaceMiB} MiB of ${kind} data in sandbox /workspace`);
    const generated = await timed(() =>
      sandboxShell(client, source, `${plan.script}\ntouch /tmp/${SOURCE_MARKER}`),
    );
    log(`generated in ${(generated.ms / 1000).toFixed(1)} s`);
    const workspaceBytes = Number((await sandboxShell(client, source, MEASURE_SCRIPT)).trim());
    const [entries = "0"] = (await sandboxShell(client, source, MANIFEST_SCRIPT)).trim().split(" ");
    log("driver: idle baseline");
    const idle = await runDriverChild(context.child, ["idle"]);
    const checkpointed = await checkpointPhase(context, source, workspaceBytes);

    log("changing 1% of the files, then the driver's second checkpoint");
    const changedFiles = Number(
      (await sandboxShell(client, source, CHANGE_ONE_PERCENT_SCRIPT)).trim(),
    );
    const second = await measured(context, "driver second checkpoint", () =>
      runDriverChild(context.child, ["checkpoint", source]),
    );
    if (!second.handle) throw new Error("the second checkpoint child returned no handle");
    log(
      `driver second checkpoint: ${(second.elapsedMs / 1000).toFixed(1)} s for ${changedFiles} changed files`,
    );
    const [, manifest = ""] = (await sandboxShell(client, source, MANIFEST_SCRIPT))
      .trim()
      .split(" ");

    const container = context.bridge.containerServer.containers
      .list()
      .find((candidate) => existsSync(join(candidate.mounts["/tmp"] ?? "", SOURCE_MARKER)));
    if (!container) throw new Error("the source sandbox's container tree was not found");
    const tree = container.mounts["/workspace"] ?? "";
    const tarFile = join(context.scratch, "workspace.tar");
    await hostTarFile(tree, tarFile);
    // While the tree is sure to be there: a source sandbox left idle through the restore phase may be gone by its end.
    log("GNU tar on the host tree");
    const hostTar = await hostTarReference(tree, context.scratch).catch((error: unknown) => {
      log(
        `GNU tar on the host tree failed, left out: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`,
      );
      return null;
    });
    const restored = await restorePhase(context, second.handle, manifest, tarFile, workspaceBytes);
    await rm(tarFile, { force: true });

    let persist: PersistAttempt | null = null;
    if (persistTimeoutSeconds > 0) {
      // Last: a failing /persist may take the local bridge's memory with it.
      log(`single /persist of the whole workspace (limit ${persistTimeoutSeconds} s)`);
      persist = await rawPersist(context.endpoint, source, {
        expectedBytes: checkpointed.rawGets.bytes,
        maxSeconds: persistTimeoutSeconds,
      });
    }
    return formatReport({
      plan,
      workspaceBytes,
      archiveBytes: checkpointed.rawGets.bytes,
      entries: Number(entries),
      changedFiles,
      verified: restored.verified,
      idle,
      checkpoint: checkpointed.checkpoint,
      secondCheckpoint: second,
      restore: restored.restore,
      restoreAgain: restored.restoreAgain,
      rawGets: checkpointed.rawGets,
      rawHydrates: restored.rawHydrates,
      persist,
      hostTar,
      loads: context.loads,
      totalSeconds: (performance.now() - started) / 1000,
      scratch: context.scratch,
      memoryTimeline: context.memoryTimeline,
    });
  } finally {
    await client.destroy(source).catch(() => undefined);
  }
}

async function main(): Promise<void> {
  const config = readBenchConfig();
  const started = performance.now();
  const scratch = await mkdtemp(join(config.scratch, "oma-bridge-bench-"));
  const storeDir = join(scratch, "store");
  const spoolDir = join(scratch, "spool");
  const containersDir = join(scratch, "containers");
  await Promise.all(
    [storeDir, spoolDir, containersDir].map((directory) => mkdir(directory, { recursive: true })),
  );
  log(`starting the local bridge (workerd + local container server), files under ${scratch}`);
  const bridge = await startLocalBridge({ rootDir: containersDir });
  try {
    const context: BenchContext = {
      bridge,
      client: createBridgeClient({ baseUrl: bridge.url, apiKey: bridge.apiKey }),
      endpoint: { url: bridge.url, apiKey: bridge.apiKey },
      child: {
        bridgeUrl: bridge.url,
        apiKey: bridge.apiKey,
        storeDir,
        spoolDir,
        sessionId: "bench",
        resultFile: join(scratch, "driver-child-result.json"),
      },
      store: createFsBlobStore({ rootDir: storeDir }),
      scratch,
      memoryTimeline: config.memoryTimeline,
      loads: {},
    };
    for (const kind of config.workloads) {
      process.stdout.write(
        `${await run(context, kind, config.workspaceMiB, config.persistTimeoutSeconds, started)}\n`,
      );
    }
  } finally {
    await bridge
      .stop()
      .catch((error: unknown) => log(`stopping the local bridge failed: ${String(error)}`));
    await rm(scratch, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `bench:bridge failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exitCode = 1;
});
