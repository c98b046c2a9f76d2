import { randomUUID } from "node:crypto";
import {
  ManagedRuntimeError,
  type WorkspaceStrategy,
} from "@open-managed-agents/runtime-resource-contract";
import { check, describeError, expectTypedError } from "./assertions.js";
import type { CaseContext } from "./case-context.js";
import type { ConformanceCaseImplementation } from "./case-definition.js";
import { EXPECTED_OUTPUTS, NONCE_ENV } from "./harness-scripts.js";
import { checkCompleted, sha256 } from "./run-checks.js";

const persistentStrategies = (strategies: readonly WorkspaceStrategy[]): WorkspaceStrategy[] =>
  strategies.filter((strategy) => strategy !== "ephemeral");

/** Runs write-then-check for one strategy in a fresh session, then checks another session sees nothing. */
async function checkWorkspaceStrategy(
  context: CaseContext,
  strategy: WorkspaceStrategy,
): Promise<void> {
  const env = { [NONCE_ENV]: randomUUID() };
  const workspace = { requirement: "ephemeral", preferredStrategies: [strategy] } as const;
  const first = await context.run(context.profile("writeWorkspace", { workspace, env }), {
    scope: context.scope({ freshSession: true }),
  });
  checkCompleted(first, `writing the workspace (${strategy})`);
  const second = await context.run(context.profile("checkWorkspace", { workspace, env }), {
    scope: context.scope(),
  });
  checkCompleted(second, `reading the workspace back in the next work item (${strategy})`);
  const [firstLease] = first.observations.leases;
  const [secondLease] = second.observations.leases;
  check(firstLease && secondLease, `a ${strategy} run acquired no lease`);
  if (strategy !== "retained_runtime") {
    check(
      secondLease.runtimeId !== firstLease.runtimeId,
      `the second work item reused runtime ${firstLease.runtimeId} instead of a fresh acquire (${strategy})`,
    );
    const { state } = await second.resources.sandbox.inspect(firstLease);
    check(
      state === "stopped" || state === "unknown",
      `the first work item's runtime is still ${state} (${strategy})`,
    );
  }
  for (const lease of second.observations.leases)
    await second.resources.sandbox.reap({ scope: second.scope, lease, reason: "completed" });
  const stranger = await context.run(context.profile("checkWorkspace", { workspace, env }), {
    scope: context.scope({ freshSession: true }),
  });
  check(
    stranger.result.type === "failed",
    `another session found this session's workspace file (${strategy})`,
  );
  check(
    ManagedRuntimeError.hasCode(stranger.result.error, "sandbox_failed"),
    `the check in another session failed with ${describeError(stranger.result.error)}, not sandbox_failed`,
  );
}

/** `persistence.workspace`. */
export const workspacePersistenceCase: ConformanceCaseImplementation = {
  claimed: (subject) =>
    persistentStrategies(subject.descriptor.capabilities.workspace.strategies).length > 0,
  async verify(context) {
    for (const strategy of persistentStrategies(
      context.subject.descriptor.capabilities.workspace.strategies,
    ))
      await checkWorkspaceStrategy(context, strategy);
  },
  async refuse(context) {
    await expectTypedError(
      () => context.prepare(context.profile("noop", { workspace: { requirement: "durable" } })),
      ["capability_unsupported"],
      "admitting a durable workspace without a persistent strategy",
    );
  },
};

/** `persistence.outputs`. */
export const outputsCase: ConformanceCaseImplementation = {
  claimed: (subject) => subject.descriptor.capabilities.outputs.strategies.length > 0,
  async verify(context) {
    for (const { strategy } of context.subject.descriptor.capabilities.outputs.strategies) {
      const run = await context.run(
        context.profile("writeOutputs", {
          outputs: { requirement: "best_effort", preferredStrategies: [strategy] },
        }),
      );
      checkCompleted(run, `the output run (${strategy})`);
      const collected = run.observations.collected.at(-1) ?? [];
      const expected = EXPECTED_OUTPUTS.map((file) => ({
        logicalPath: file.logicalPath,
        size: file.content.byteLength,
        contentHash: sha256(file.content),
      }));
      const actual = collected
        .map(({ logicalPath, size, contentHash }) => ({ logicalPath, size, contentHash }))
        .sort((a, b) => a.logicalPath.localeCompare(b.logicalPath));
      check(
        JSON.stringify(actual) === JSON.stringify(expected),
        `collected outputs ${JSON.stringify(actual)} differ from the files written (${strategy})`,
      );
      const manifest = run.observations.manifests.at(-1);
      check(
        manifest?.entries === expected.length,
        `the manifest lists ${manifest?.entries ?? "no"} entries, not ${expected.length} (${strategy})`,
      );
      const publication = await context.publication(run.scope);
      check(
        publication?.outputCandidate?.id === manifest.id,
        `the publication does not point at the finalized manifest (${strategy})`,
      );
      check(
        publication.outputCandidate.contentHash === manifest.contentHash,
        `the published manifest hash differs from the finalized one (${strategy})`,
      );
    }
  },
  async refuse(context) {
    await expectTypedError(
      () => context.prepare(context.profile("noop", { outputs: { requirement: "durable" } })),
      ["capability_unsupported"],
      "admitting durable session outputs without an advertised output strategy",
    );
  },
};
