import {
  createBridgeCheckpointer
} from "./chunk-6I3QRRF2.js";
import {
  createBridgeClient
} from "./chunk-WEIRAH7Z.js";

// bench/.explore/restore-variant.ts
import { createFsBlobStore } from "@open-managed-agents/blob-store/fs";
var [variant = "baseline", handleJson = "{}", partMiB = "8"] = process.argv.slice(2);
var baseUrl = process.env.OMA_BENCH_BRIDGE_URL ?? "";
var apiKey = process.env.OMA_BENCH_BRIDGE_API_KEY ?? "";
var base = createBridgeClient({ baseUrl, apiKey });
var client = variant === "stream" ? {
  ...base,
  async hydrate(id2, tar, signal) {
    const body = new ReadableStream({ start(controller) {
      controller.enqueue(tar);
      controller.close();
    } });
    const response = await fetch(`${baseUrl}/v1/sandbox/${id2}/hydrate`, {
      method: "POST",
      body,
      duplex: "half",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/x-tar", "content-length": String(tar.byteLength) },
      signal
    });
    if (!response.ok) throw new Error(`hydrate ${response.status}: ${await response.text()}`);
    await response.body?.cancel();
  }
} : base;
var checkpointer = createBridgeCheckpointer({
  provider: "cloudflare-bridge",
  client,
  store: createFsBlobStore({ rootDir: process.env.OMA_BENCH_STORE_DIR ?? "" }),
  keyPrefix: "cloudflare-bridge-workspaces",
  excludes: [],
  maxRequestBytes: 32 << 20,
  singleRequestBytes: 16 << 20,
  partBytes: Number(partMiB) << 20,
  maxCheckpointBytes: 10 << 30,
  spoolDirectory: process.env.OMA_BENCH_SPOOL_DIR
});
var id = await client.create();
var start = performance.now();
await checkpointer.restore({ sandboxId: id, handle: JSON.parse(handleJson) });
var ms = performance.now() - start;
await client.destroy(id);
console.log(`RESULT ${variant} part=${partMiB}MiB ${(ms / 1e3).toFixed(1)} s peak ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`);
process.exit(0);
