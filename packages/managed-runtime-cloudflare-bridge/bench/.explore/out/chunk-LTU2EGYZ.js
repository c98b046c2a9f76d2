// bench/child-protocol.ts
import { spawn } from "child_process";
import { fileURLToPath } from "url";
import { z } from "zod";
var RESULT_PREFIX = "OMA_BENCH_RESULT ";
var stepSchema = z.object({ step: z.string(), ms: z.number(), count: z.number(), bytes: z.number() });
var childResultSchema = z.object({
  mode: z.string(),
  elapsedMs: z.number(),
  steps: z.array(stepSchema),
  rssAtStartBytes: z.number(),
  peakRssBytes: z.number(),
  handle: z.custom((value) => typeof value === "object" && value !== null).optional(),
  runtimeId: z.string().optional()
});
function runDriverChild(environment, args) {
  const script = fileURLToPath(new URL("./driver-child.js", import.meta.url));
  const child = spawn(process.execPath, [script, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      OMA_BENCH_BRIDGE_URL: environment.bridgeUrl,
      OMA_BENCH_BRIDGE_API_KEY: environment.apiKey,
      OMA_BENCH_STORE_DIR: environment.storeDir,
      OMA_BENCH_SPOOL_DIR: environment.spoolDir
    }
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk) => stdout += chunk);
  child.stderr.setEncoding("utf8").on("data", (chunk) => stderr = (stderr + chunk).slice(-8192));
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => {
      const line = stdout.split("\n").find((candidate) => candidate.startsWith(RESULT_PREFIX));
      if (code !== 0 || !line) {
        reject(new Error(`driver child ${args[0]} exited ${code}: ${stderr.trim()}`));
        return;
      }
      resolve(childResultSchema.parse(JSON.parse(line.slice(RESULT_PREFIX.length))));
    });
  });
}

export {
  RESULT_PREFIX,
  runDriverChild
};
