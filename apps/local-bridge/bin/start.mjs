#!/usr/bin/env node
// Starts the local Sandbox Bridge (Cloudflare's bridge Worker in local workerd over the local container
// server), prints its URL and API key, and stops everything on Ctrl-C.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { startLocalBridge } from "@open-managed-agents/local-container";

const appBundle = fileURLToPath(new URL("../dist/index.js", import.meta.url));
const useAppBundle = existsSync(appBundle);

const bridge = await startLocalBridge({
  transport: process.env.SANDBOX_TRANSPORT ?? "http",
  warmPoolTarget: Number(process.env.WARM_POOL_TARGET ?? "0"),
  port: Number(process.env.PORT ?? "0"),
  ...(process.env.SANDBOX_API_KEY ? { apiKey: process.env.SANDBOX_API_KEY } : {}),
  ...(useAppBundle ? { workerScriptPath: appBundle } : {}),
});

process.stdout.write(
  [
    "Local Sandbox Bridge is running.",
    `  URL:              ${bridge.url}`,
    `  API key:          ${bridge.apiKey}`,
    `  Container server: ${bridge.containerServer.url}`,
    `  Worker bundle:    ${useAppBundle ? appBundle : "packaged (@open-managed-agents/local-container)"}`,
    "Press Ctrl-C to stop.",
    "",
  ].join("\n"),
);

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await bridge.stop();
  process.exit(0);
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
