import {
  runDriverChild
} from "./chunk-LTU2EGYZ.js";
import {
  createBridgeClient
} from "./chunk-WEIRAH7Z.js";

// bench/.explore/parent.ts
import { mkdir, mkdtemp, rm } from "fs/promises";
import { join } from "path";
import { spawn } from "child_process";
import { startLocalBridge } from "@open-managed-agents/local-container";

// bench/sandbox-shell.ts
async function sandboxShell(client2, sandboxId, script) {
  const decoder = { stdout: new TextDecoder(), stderr: new TextDecoder() };
  let stdout = "";
  let stderr = "";
  for await (const event of client2.exec(sandboxId, { argv: ["sh", "-c", script] })) {
    if (event.type === "exit") {
      if (event.exitCode !== 0) throw new Error(`sandbox script exited ${event.exitCode}: ${stderr.slice(0, 500)}`);
      return stdout;
    }
    if (event.type === "stdout") stdout += decoder.stdout.decode(event.data, { stream: true });
    else stderr += decoder.stderr.decode(event.data, { stream: true });
  }
  throw new Error("sandbox script ended without an exit status");
}

// bench/workspace-generator.ts
var MIB = 1024 * 1024;
var SMALL_FILE_SIZES = [517, 1024, 2900, 4096, 7001];
var SMALL_DIRECTORIES = 32;
var LARGE_FILE_BYTES = 48 * MIB + 12345;
function workspacePlan(totalMiB) {
  const total = totalMiB * MIB;
  const smallBytesPerDirectory = Math.floor(total / 8 / SMALL_DIRECTORIES);
  const lines = ["set -e", "cd /workspace", "mkdir -p small medium large empty/nested bin"];
  let smallFiles = 0;
  for (let index = 0; index < SMALL_DIRECTORIES; index++) {
    const size = SMALL_FILE_SIZES[index % SMALL_FILE_SIZES.length] ?? 4096;
    const directory = `small/d${String(index).padStart(2, "0")}`;
    lines.push(`mkdir -p ${directory} && head -c ${smallBytesPerDirectory} /dev/urandom | split -b ${size} -a 4 -d - ${directory}/f`);
    smallFiles += Math.ceil(smallBytesPerDirectory / size);
  }
  let mediumBytes = Math.floor(total / 8);
  let mediumFiles = 0;
  while (mediumBytes > 0) {
    const size = Math.min(mediumBytes, (mediumFiles % 6 + 1) * MIB + 4321);
    lines.push(`head -c ${size} /dev/urandom > medium/m${mediumFiles}.bin`);
    mediumBytes -= size;
    mediumFiles += 1;
  }
  let largeBytes = total - smallBytesPerDirectory * SMALL_DIRECTORIES - Math.floor(total / 8);
  let largeFiles = 0;
  while (largeBytes > 0) {
    const size = Math.min(largeBytes, LARGE_FILE_BYTES);
    lines.push(`head -c ${size} /dev/urandom > large/l${largeFiles}.bin`);
    largeBytes -= size;
    largeFiles += 1;
  }
  lines.push("printf '#!/bin/sh\\necho tool\\n' > bin/tool.sh && chmod 755 bin/tool.sh", "ln -s ../large/l0.bin bin/large-link");
  return { script: lines.join("\n"), smallFiles, mediumFiles, largeFiles, totalBytes: total };
}
var MANIFEST_SCRIPT = [
  "cd /workspace",
  "{ find . -mindepth 1 -printf '%y %m %p %l\\n' | LC_ALL=C sort; find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum; } > /tmp/bench-manifest",
  'echo "$(find . -mindepth 1 | wc -l) $(sha256sum < /tmp/bench-manifest | cut -d" " -f1)"'
].join(" && ");

// bench/.explore/parent.ts
var scratch = await mkdtemp("/var/tmp/oma-explore-");
var storeDir = join(scratch, "store");
var spoolDir = join(scratch, "spool");
await mkdir(storeDir);
await mkdir(spoolDir);
var bridge = await startLocalBridge();
var client = createBridgeClient({ baseUrl: bridge.url, apiKey: bridge.apiKey });
var env = { bridgeUrl: bridge.url, apiKey: bridge.apiKey, storeDir, spoolDir };
var source = await client.create();
await sandboxShell(client, source, workspacePlan(Number(process.env.MIB ?? "96")).script);
var checkpoint = await runDriverChild(env, ["checkpoint", source]);
console.log(`checkpoint ${(checkpoint.elapsedMs / 1e3).toFixed(1)} s peak ${(checkpoint.peakRssBytes / 1048576).toFixed(0)} MiB`);
var runVariant = (args) => new Promise((resolve) => {
  const child = spawn(process.execPath, [new URL("./restore-variant.js", import.meta.url).pathname, ...args], {
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, OMA_BENCH_BRIDGE_URL: bridge.url, OMA_BENCH_BRIDGE_API_KEY: bridge.apiKey, OMA_BENCH_STORE_DIR: storeDir, OMA_BENCH_SPOOL_DIR: spoolDir }
  });
  child.on("close", () => resolve());
});
var handle = JSON.stringify(checkpoint.handle);
for (const [variant, part] of (process.env.VARIANTS ?? "baseline:8,stream:8,baseline:4,stream:4").split(",").map((entry) => entry.split(":"))) {
  await runVariant([variant ?? "baseline", handle, part ?? "8"]);
}
await bridge.stop();
await rm(scratch, { recursive: true, force: true });
