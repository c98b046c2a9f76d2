// A package's workerd suite: `vitest run <arguments>`, once more when, and only when, the stall watchdog
// (vitest.stall-watchdog.ts, a reporter of the suite's config) ended the first run with no test failed.
// vitest-pool-workers 0.15.1 can wait forever between test files for a runner that already reported every
// test of its file; the watchdog turns that into exit code 75 with what ran last. Any other outcome, a
// failing test included (also one followed by a stall), is final.
import { spawn } from "node:child_process";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";

/** vitest.stall-watchdog.ts's STALL_EXIT_CODE. */
const STALL_EXIT_CODE = 75;
const ATTEMPTS = 2;
// `pnpm test` puts the package's node_modules/.bin on PATH; run directly, the script finds vitest in the
// package's (the working directory's) and then the workspace root's.
const PATH = [
  process.env.PATH,
  join(process.cwd(), "node_modules", ".bin"),
  fileURLToPath(new URL("../node_modules/.bin", import.meta.url)),
]
  .filter(Boolean)
  .join(delimiter);

function runOnce() {
  return new Promise((resolve, reject) => {
    const child = spawn("vitest", ["run", ...process.argv.slice(2)], {
      stdio: "inherit",
      env: { ...process.env, PATH },
    });
    const forward = (signal) => child.kill(signal);
    process.on("SIGINT", forward).on("SIGTERM", forward);
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      process.off("SIGINT", forward).off("SIGTERM", forward);
      resolve(code ?? (signal ? 128 : 1));
    });
  });
}

let code = STALL_EXIT_CODE;
for (let attempt = 1; attempt <= ATTEMPTS && code === STALL_EXIT_CODE; attempt += 1) {
  if (attempt > 1)
    process.stderr.write(
      `run-workerd-tests: the run stalled (exit ${STALL_EXIT_CODE}); running the workerd suite once more\n`,
    );
  code = await runOnce();
}
process.exitCode = code;
