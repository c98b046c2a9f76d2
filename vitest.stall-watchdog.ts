import type { Reporter, TestCase, TestModule } from "vitest/node";

/**
 * Exit code of a run the watchdog ended: no test event for longer than any test or hook may take, and no
 * test failed before. `scripts/run-workerd-tests.mjs` runs the suite once more on this code, and only on it.
 */
export const STALL_EXIT_CODE = 75;

/** Exit code of a stalled run in which a test had already failed: final, so a failure is never run again. */
export const STALL_AFTER_FAILURE_EXIT_CODE = 1;

/** Options of {@link createStallWatchdog}. */
export interface StallWatchdogOptions {
  /** Silence, in ms, after which the run counts as stalled; longer than the longest test or hook deadline. */
  readonly stallMs: number;
  /** How often the silence is checked. @default 5_000 */
  readonly checkMs?: number;
}

/**
 * A reporter that ends a run which stopped making progress. vitest-pool-workers 0.15.1 can wait forever for
 * the runner inside workerd to report a test file finished, after every test of it passed: no deadline covers
 * that wait, so a CI job would sit until its own limit. The watchdog names what ran last and exits with
 * {@link STALL_EXIT_CODE} instead, or with {@link STALL_AFTER_FAILURE_EXIT_CODE} naming the failed tests when
 * one failed before the stall (the run has failed; it must not be retried). A failing or timed-out test is
 * an event like any other and never trips it.
 */
export function createStallWatchdog(options: StallWatchdogOptions): Reporter {
  let last = { at: Date.now(), what: "run started" };
  const open = new Map<string, string>();
  const failed: string[] = [];
  // The run's own report of a failure comes at its end, which a stalled run never reaches: kept to print.
  const failures: string[] = [];
  const seen = (what: string) => {
    last = { at: Date.now(), what };
  };
  let timer: ReturnType<typeof setInterval> | undefined;
  return {
    onInit() {
      seen("run started");
      timer = setInterval(() => {
        const silentMs = Date.now() - last.at;
        if (silentMs < options.stallMs) return;
        clearInterval(timer);
        const modules = [...open.values()].join(", ") || "none";
        const named = failed.length === 0 ? "" : ` Failed before the stall: ${failed.join("; ")}.`;
        process.stderr.write(
          `\nvitest stalled: no test event for ${Math.round(silentMs / 1000)} s. Last: ${last.what} at ${new Date(last.at).toISOString()}. Files not reported finished: ${modules}.${named}\n${failures.join("")}`,
        );
        process.exit(failed.length === 0 ? STALL_EXIT_CODE : STALL_AFTER_FAILURE_EXIT_CODE);
      }, options.checkMs ?? 5_000);
      // The run's own handles keep the process alive; the watchdog never should.
      timer.unref();
    },
    onTestModuleQueued(module: TestModule) {
      open.set(module.moduleId, module.relativeModuleId);
      seen(`queued ${module.relativeModuleId}`);
    },
    onTestModuleStart(module: TestModule) {
      seen(`started ${module.relativeModuleId}`);
    },
    onTestModuleEnd(module: TestModule) {
      open.delete(module.moduleId);
      seen(`ended ${module.relativeModuleId}`);
    },
    onTestCaseReady(test: TestCase) {
      seen(`began "${test.fullName}"`);
    },
    onTestCaseResult(test: TestCase) {
      const result = test.result();
      if (result.state === "failed") {
        failed.push(`"${test.fullName}" in ${test.module.relativeModuleId}`);
        failures.push(describeFailure(test.fullName, result.errors ?? []));
      }
      seen(`finished "${test.fullName}"`);
    },
    onHookStart(hook) {
      seen(`hook ${hook.name} started`);
    },
    onHookEnd(hook) {
      seen(`hook ${hook.name} ended`);
    },
    onTestRunEnd() {
      clearInterval(timer);
    },
  };
}

/** A failed test's errors as the run's own report would have shown them: message, diff and the stack's top. */
function describeFailure(
  name: string,
  errors: readonly { message?: string; diff?: string; stack?: string }[],
): string {
  const shown = errors.map((error) => {
    const stack = (error.stack ?? "").split("\n").slice(0, 12).join("\n");
    return [error.message ?? "(no message)", error.diff, stack]
      .filter((part) => part !== undefined && part !== "")
      .join("\n");
  });
  return `\nFAILED "${name}":\n${shown.join("\n\n") || "(no error recorded)"}\n`;
}
