import { createFsBlobStore } from "@open-managed-agents/blob-store/fs";
import type { SandboxCheckpointHandle } from "@open-managed-agents/runtime-resource-contract";
import { createBridgeCheckpointer } from "../../src/checkpoint/bridge-checkpointer.js";
import { createBridgeClient, type BridgeClient } from "../../src/wire/bridge-client.js";

const [variant = "baseline", handleJson = "{}", partMiB = "8"] = process.argv.slice(2);
const baseUrl = process.env.OMA_BENCH_BRIDGE_URL ?? "";
const apiKey = process.env.OMA_BENCH_BRIDGE_API_KEY ?? "";
const base = createBridgeClient({ baseUrl, apiKey });
const client: BridgeClient =
  variant === "stream"
    ? {
        ...base,
        async hydrate(id, tar, signal) {
          const body = new ReadableStream<Uint8Array>({ start(controller) { controller.enqueue(tar); controller.close(); } });
          const response = await fetch(`${baseUrl}/v1/sandbox/${id}/hydrate`, {
            method: "POST",
            body,
            duplex: "half",
            headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/x-tar", "content-length": String(tar.byteLength) },
            signal,
          } as RequestInit);
          if (!response.ok) throw new Error(`hydrate ${response.status}: ${await response.text()}`);
          await response.body?.cancel();
        },
      }
    : base;
const checkpointer = createBridgeCheckpointer({
  provider: "cloudflare-bridge",
  client,
  store: createFsBlobStore({ rootDir: process.env.OMA_BENCH_STORE_DIR ?? "" }),
  keyPrefix: "cloudflare-bridge-workspaces",
  excludes: [],
  maxRequestBytes: 32 << 20,
  singleRequestBytes: 16 << 20,
  partBytes: Number(partMiB) << 20,
  maxCheckpointBytes: 10 << 30,
  spoolDirectory: process.env.OMA_BENCH_SPOOL_DIR,
});
const id = await client.create();
const start = performance.now();
await checkpointer.restore({ sandboxId: id, handle: JSON.parse(handleJson) as SandboxCheckpointHandle });
const ms = performance.now() - start;
await client.destroy(id);
console.log(`RESULT ${variant} part=${partMiB}MiB ${(ms / 1000).toFixed(1)} s peak ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`);
process.exit(0);
