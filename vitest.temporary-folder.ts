import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Vitest global setup: a run's temporary files go to a folder of its own, removed when the run ends. The
 * folder is `TMPDIR` for the run's workers and every process they start (sandboxes get an environment of
 * their own), so a test that forgets a temporary folder, or a child process killed on purpose, leaves
 * nothing behind in the system's temporary folder. Reference it as `globalSetup: ["../../vitest.temporary-folder.ts"]`.
 */
export default function setup(): () => void {
  const previous = process.env.TMPDIR;
  const folder = mkdtempSync(join(tmpdir(), "oma-test-run-"));
  process.env.TMPDIR = folder;
  return () => {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    try {
      rmSync(folder, { recursive: true, force: true, maxRetries: 3 });
    } catch (error) {
      process.stderr.write(
        `could not remove the test run's temporary folder ${folder}: ${String(error)}\n`,
      );
    }
  };
}
