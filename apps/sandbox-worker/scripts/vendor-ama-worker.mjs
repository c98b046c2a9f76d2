// Copies the self-contained oma-ama-worker bin into vendor/, the Docker build context's copy of it.
import { copyFile, mkdir } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const packageDir = dirname(require.resolve("@open-managed-agents/ama-worker/package.json"));
await mkdir(join(here, "..", "vendor"), { recursive: true });
await copyFile(
  join(packageDir, "dist", "bin", "oma-ama-worker.js"),
  join(here, "..", "vendor", "oma-ama-worker.js"),
);
process.stdout.write("vendor/oma-ama-worker.js ready\n");
