#!/usr/bin/env node
import { AmaWorkerConfigError } from "./config.js";
import { runAmaWorkerItem } from "./run.js";
import { versionLine } from "./version.js";

// SIGTERM from the sandbox (terminate, lease lost) ends the item's runner promptly.
const controller = new AbortController();
for (const signal of ["SIGTERM", "SIGINT"] as const) process.once(signal, () => controller.abort());

if (process.argv.includes("--version")) {
  process.stdout.write(`${versionLine()}\n`);
  process.exit(0);
}

runAmaWorkerItem({ signal: controller.signal }).then(
  () => process.exit(0),
  (error: unknown) => {
    // Only the error's name and message: SDK errors carry no credentials in either.
    const message = AmaWorkerConfigError.isInstance(error)
      ? `configuration: ${error.message}`
      : error instanceof Error
        ? `${error.name}: ${error.message}`
        : "unknown failure";
    process.stderr.write(`oma-ama-worker: ${message}\n`);
    process.exit(1);
  },
);
