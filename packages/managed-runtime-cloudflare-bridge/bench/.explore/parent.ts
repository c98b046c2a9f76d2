import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { spawn } from "node:child_process";
import { startLocalBridge } from "@open-managed-agents/local-container";
import { createBridgeClient } from "../../src/wire/bridge-client.js";
import { runDriverChild } from "../child-protocol.js";
import { sandboxShell } from "../sandbox-shell.js";
import { workspacePlan } from "../workspace-generator.js";

const scratch = await mkdtemp("/var/tmp/oma-explore-");
const storeDir = join(scratch, "store");
const spoolDir = join(scratch, "spool");
await mkdir(storeDir);
await mkdir(spoolDir);
const bridge = await startLocalBridge();
const client = createBridgeClient({ baseUrl: bridge.url, apiKey: bridge.apiKey });
const env = { bridgeUrl: bridge.url, apiKey: bridge.apiKey, storeDir, spoolDir };
const source = await client.create();
await sandboxShell(client, source, workspacePlan(Number(process.env.MIB ?? "96")).script);
const checkpoint = await runDriverChild(env, ["checkpoint", source]);
console.log(`checkpoint ${(checkpoint.elapsedMs / 1000).toFixed(1)} s peak ${(checkpoint.peakRssBytes / 1048576).toFixed(0)} MiB`);
const runVariant = (args: string[]) =>
  new Promise<void>((resolve) => {
    const child = spawn(process.execPath, [new URL("./restore-variant.js", import.meta.url).pathname, ...args, ], {
      stdio: ["ignore", "inherit", "inherit"],
      env: { ...process.env, OMA_BENCH_BRIDGE_URL: bridge.url, OMA_BENCH_BRIDGE_API_KEY: bridge.apiKey, OMA_BENCH_STORE_DIR: storeDir, OMA_BENCH_SPOOL_DIR: spoolDir },
    });
    child.on("close", () => resolve());
  });
const handle = JSON.stringify(checkpoint.handle);
for (const [variant, part] of (process.env.VARIANTS ?? "baseline:8,stream:8,baseline:4,stream:4").split(",").map((entry) => entry.split(":"))) {
  await runVariant([variant ?? "baseline", handle, part ?? "8"]);
}
await bridge.stop();
await rm(scratch, { recursive: true, force: true });
