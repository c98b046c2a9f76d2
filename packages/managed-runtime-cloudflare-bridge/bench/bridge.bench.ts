/**
 * `pnpm bench:bridge`: checkpoints and restores a generated workspace through the local bridge stack into
 * the fs blob store, and measures what the bridge itself allows for the same bytes (curl file GETs and
 * `/hydrate` of 8 MiB parts, one `/persist`), plus GNU tar on the host. Prints figures, no assertions.
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { createFsBlobStore } from "@open-managed-agents/blob-store/fs";
import { startLocalBridge } from "@open-managed-agents/local-container";
import { createBridgeClient } from "../src/wire/bridge-client.js";
import { readBenchConfig } from "./bench-config.js";
import { type ChildEnvironment, runDriverChild } from "./child-protocol.js";
import { hostTarReference } from "./host-tar.js";
import { type PersistAttempt, rawFileGets, rawHydrates, rawPersist } from "./raw-bridge.js";
import { formatReport } from "./report.js";
import { sandboxShell, timed } from "./sandbox-shell.js";
import { MANIFEST_SCRIPT, MEASURE_SCRIPT, workspacePlan } from "./workspace-generator.js";

const PART_BYTES = 8 * 1024 * 1024;
const SOURCE_MARKER = "bench-source-sandbox";

const log = (message: string) => process.stderr.write(`[bench:bridge] ${message}\n`);

async function main(): Promise<void> {
  const config = readBenchConfig();
  const started = performance.now();
  const scratch = await mkdtemp("/var/tmp/oma-bridge-bench-");
  const storeDir = join(scratch, "store");
  const spoolDir = join(scratch, "spool");
  const hostParts = join(scratch, "hydrate-parts");
  await Promise.all([storeDir, spoolDir, hostParts].map((directory) => mkdir(directory, { recursive: true })));
  log("starting the local bridge (workerd + local container server)");
  const bridge = await startLocalBridge();
  const client = createBridgeClient({ baseUrl: bridge.url, apiKey: bridge.apiKey });
  const endpoint = { url: bridge.url, apiKey: bridge.apiKey };
  const childEnvironment: ChildEnvironment = { bridgeUrl: bridge.url, apiKey: bridge.apiKey, storeDir, spoolDir };
  const store = createFsBlobStore({ rootDir: storeDir });
  let source: string | null = null;
  try {
    const plan = workspacePlan(config.workspaceMiB);
    source = await client.create();
    log(`generating ${config.workspaceMiB} MiB in sandbox /workspace`);
    const generated = await timed(() => sandboxShell(client, source ?? "", `${plan.script}\ntouch /tmp/${SOURCE_MARKER}`));
    log(`generated in ${(generated.ms / 1000).toFixed(1)} s`);
    const workspaceBytes = Number((await sandboxShell(client, source, MEASURE_SCRIPT)).trim());
    const [entries = "0", before = ""] = (await sandboxShell(client, source, MANIFEST_SCRIPT)).trim().split(" ");

    log("driver: idle baseline");
    const idle = await runDriverChild(childEnvironment, ["idle"]);
    log("driver: checkpoint");
    const checkpoint = await runDriverChild(childEnvironment, ["checkpoint", source]);
    const handle = checkpoint.handle;
    if (!handle) throw new Error("the checkpoint child returned no handle");
    const metadata = handle.metadata as { blobKey: string; size: number };
    log(`driver checkpoint: ${(checkpoint.elapsedMs / 1000).toFixed(1)} s; raw: tar | split in the sandbox, then curl GETs`);
    const rawGets = await rawFileGets(client, endpoint, source, PART_BYTES);

    log("driver: restore into a fresh sandbox");
    const restore = await runDriverChild(childEnvironment, ["restore", JSON.stringify(handle)]);
    const restored = restore.runtimeId ?? "";
    const [, after = ""] = (await sandboxShell(client, restored, MANIFEST_SCRIPT)).trim().split(" ");
    await client.destroy(restored);
    log(`driver restore: ${(restore.elapsedMs / 1000).toFixed(1)} s; raw: curl /hydrate of 8 MiB parts`);
    const hydrates = await rawHydrates(client, endpoint, { store, blobKey: metadata.blobKey, partBytes: PART_BYTES, hostDirectory: hostParts });
    await rm(hostParts, { recursive: true, force: true });

    log("GNU tar on the host tree");
    const container = bridge.containerServer.containers.list().find((candidate) => existsSync(join(candidate.mounts["/tmp"] ?? "", SOURCE_MARKER)));
    const hostTar = container ? await hostTarReference(container.mounts["/workspace"] ?? "", scratch) : null;

    let persist: PersistAttempt | null = null;
    if (config.persistTimeoutSeconds > 0) {
      // Last: a failing /persist may take the local bridge's memory with it.
      log(`single /persist of the whole workspace (limit ${config.persistTimeoutSeconds} s)`);
      persist = await rawPersist(endpoint, source, { expectedBytes: metadata.size, maxSeconds: config.persistTimeoutSeconds });
    }
    process.stdout.write(
      `${formatReport({
        plan,
        workspaceBytes,
        archiveBytes: metadata.size,
        entries: Number(entries),
        verified: before !== "" && before === after,
        idle,
        checkpoint,
        restore,
        rawGets,
        rawHydrates: hydrates,
        persist,
        hostTar,
        totalSeconds: (performance.now() - started) / 1000,
      })}\n`,
    );
  } finally {
    if (source) await client.destroy(source).catch(() => undefined);
    await bridge.stop().catch((error: unknown) => log(`stopping the local bridge failed: ${String(error)}`));
    await rm(scratch, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:bridge failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
