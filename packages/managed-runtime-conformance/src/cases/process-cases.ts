import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { check, checkNoOrphans, describeError, expectTypedError } from "./assertions.js";
import { type ConformanceCaseImplementation, always } from "./case-definition.js";
import { EXPECTED_BINARY_OUTPUT, SESSION_ENV } from "./harness-scripts.js";
import { checkCompleted, sha256 } from "./run-checks.js";

/** `processes.exec-exit-code`. */
export const execExitCodeCase: ConformanceCaseImplementation = {
  claimed: always,
  async verify(context) {
    const run = await context.run(
      context.profile("noop", { command: context.subject.harness.missingCommand }),
    );
    check(
      run.result.type === "failed",
      `a run with a missing harness binary ended ${run.result.type}`,
    );
    const { error } = run.result;
    check(
      ManagedRuntimeError.hasCode(error, "readiness_failed"),
      `a missing harness binary failed with ${describeError(error)}, not readiness_failed`,
    );
    const { exitCode, output } = error.context;
    check(
      typeof exitCode === "number" && exitCode !== 0,
      `the readiness error reports exit code ${String(exitCode)}, not the probe's non-zero exit`,
    );
    check(typeof output === "string", "the readiness error carries no probe output");
  },
};

/** `processes.workspace-files`. */
export const workspaceFilesCase: ConformanceCaseImplementation = {
  claimed: always,
  async verify(context) {
    checkCompleted(
      await context.run(context.profile("workspaceFiles")),
      "the /workspace file check",
    );
  },
};

/** `processes.bytes-io`. */
export const bytesCase: ConformanceCaseImplementation = {
  claimed: (subject) => subject.descriptor.capabilities.outputs.strategies.length > 0,
  async verify(context) {
    const run = await context.run(
      context.profile("writeBinaryOutput", { outputs: { requirement: "best_effort" } }),
    );
    checkCompleted(run, "the binary output run");
    const entry = run.observations.collected
      .flat()
      .find((candidate) => candidate.logicalPath === EXPECTED_BINARY_OUTPUT.logicalPath);
    check(entry, `${EXPECTED_BINARY_OUTPUT.logicalPath} was not collected`);
    check(
      entry.size === EXPECTED_BINARY_OUTPUT.content.byteLength,
      `${entry.logicalPath} was collected as ${entry.size} bytes, not ${EXPECTED_BINARY_OUTPUT.content.byteLength}`,
    );
    check(
      entry.contentHash === sha256(EXPECTED_BINARY_OUTPUT.content),
      `${entry.logicalPath} was collected with the wrong content hash`,
    );
  },
  async refuse(context) {
    await expectTypedError(
      () => context.prepare(context.profile("noop", { outputs: { requirement: "best_effort" } })),
      ["capability_unsupported"],
      "admitting session outputs without an advertised output strategy",
    );
  },
};

/** `processes.duplex-stdin`. */
export const duplexCase: ConformanceCaseImplementation = {
  claimed: (subject) =>
    subject.descriptor.capabilities.harness.drivers.includes("openma_supervised"),
  async verify(context) {
    const scope = context.scope();
    const run = await context.run(
      context.profile("supervisor", { supervised: true, env: { [SESSION_ENV]: scope.sessionId } }),
      { scope },
    );
    checkCompleted(run, "the supervised round trip");
  },
  async refuse(context) {
    await expectTypedError(
      () => context.prepare(context.profile("supervisor", { supervised: true })),
      ["capability_unsupported"],
      "admitting a supervised harness, which needs duplex stdin, without the lane",
    );
  },
};

/** `readiness.lease-gated`. */
export const readinessCase: ConformanceCaseImplementation = {
  claimed: always,
  async verify(context) {
    const missing = await context.run(
      context.profile("noop", { command: context.subject.harness.missingCommand }),
    );
    check(
      missing.observations.leases.length === 0,
      "acquire returned a lease although the harness binary is missing",
    );
    check(missing.observations.harnessRuns === 0, "the harness started although readiness failed");
    check(
      missing.observations.acquireErrors.some((error) =>
        ManagedRuntimeError.hasCode(error, "readiness_failed"),
      ),
      "acquire did not fail with readiness_failed for a missing harness binary",
    );
    await checkNoOrphans(context.orphans, "a failed readiness probe left an orphan");
    const present = await context.run(context.profile("noop"));
    checkCompleted(present, "a run with a present harness binary");
    check(
      present.observations.leases.length === 1 && present.observations.harnessRuns === 1,
      "a ready runtime did not yield exactly one lease and one harness run",
    );
  },
};
