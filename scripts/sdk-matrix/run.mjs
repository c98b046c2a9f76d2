// Runs a package's SDK-facing suite once per SDK of the matrix (versions.mjs): `node sdk-matrix/run.mjs
// <command> [arguments]`. Each run gets OMA_TEST_SDK. The bin of each SDK's build installs into a folder
// named by its own sha256 (ama-worker's default), so two suites running at once never swap each other's
// oma-ama-worker; where OMA_AMA_WORKER_BIN_DIR names one folder, every SDK but the lowest gets a folder of
// its own below it.
// With OMA_TEST_SDK already set, only that SDK runs. Stops at the first run that fails, with its exit code.
import { spawn } from "node:child_process";
import { delimiter, join } from "node:path";
import { SDK_MATRIX, WORKSPACE_ROOT, installedSdkVersion, sdkUnderTest } from "./versions.mjs";

const [command, ...args] = process.argv.slice(2);
if (!command) {
  process.stderr.write("usage: node scripts/sdk-matrix/run.mjs <command> [arguments]\n");
  process.exit(2);
}
const PATH = [
  process.env.PATH,
  join(process.cwd(), "node_modules", ".bin"),
  join(WORKSPACE_ROOT, "node_modules", ".bin"),
]
  .filter(Boolean)
  .join(delimiter);
const runs = process.env.OMA_TEST_SDK ? [sdkUnderTest()] : SDK_MATRIX;

function runOnce(entry) {
  const binDirectory = process.env.OMA_AMA_WORKER_BIN_DIR;
  const env = { ...process.env, PATH, OMA_TEST_SDK: entry.name };
  if (binDirectory && entry.name !== "lowest")
    env.OMA_AMA_WORKER_BIN_DIR = join(binDirectory, `sdk-${entry.name}`);
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: "inherit", env });
    const forward = (signal) => child.kill(signal);
    process.on("SIGINT", forward).on("SIGTERM", forward);
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      process.off("SIGINT", forward).off("SIGTERM", forward);
      resolve(code ?? (signal ? 128 : 1));
    });
  });
}

for (const entry of runs) {
  const started = Date.now();
  process.stdout.write(
    `sdk-matrix: ${command} with ${entry.packageName} ${installedSdkVersion(entry)} (${entry.name})\n`,
  );
  const code = await runOnce(entry);
  process.stdout.write(
    `sdk-matrix: ${entry.name} ${code === 0 ? "passed" : `failed (exit ${code})`} in ${Math.round((Date.now() - started) / 1000)} s\n`,
  );
  if (code !== 0) {
    process.exitCode = code;
    break;
  }
}
