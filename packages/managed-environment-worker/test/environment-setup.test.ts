import type { ManagedRuntimeRunInput } from "@open-managed-agents/managed-runtime-host";
import { afterEach, beforeEach, expect, it } from "vitest";
import { type Stack, startStack } from "./support/stack.js";

let stack: Stack;
beforeEach(async () => {
  stack = await startStack();
});
afterEach(() => stack.close());

it("passes the deployer's environment setup for the item to the host run, and nothing without it", async () => {
  const inputs: ManagedRuntimeRunInput[] = [];
  const asked: string[] = [];
  const hostOf = stack.hostFactory();
  const worker = await stack.worker({
    environmentFor: (work, session) => {
      asked.push(`${work.id}:${session.id}`);
      return session.id === withSetup.id
        ? { packages: { pip: ["requests==2.32.3"] }, sandboxImageAlias: "python-3.12" }
        : null;
    },
    async host(input) {
      const host = await hostOf(input);
      return {
        run(runInput) {
          inputs.push(runInput);
          // The stack's driver has no package installer, so the host refuses a run that lists packages;
          // the setup is checked here, where it reaches the host, and the run goes on without it.
          const { environmentPackages: _packages, sandboxImageAlias: _alias, ...rest } = runInput;
          return host.run(rest);
        },
      };
    },
  });
  const withSetup = stack.plane.createSession({ environmentId: stack.environment.id });
  const without = stack.plane.createSession({ environmentId: stack.environment.id });
  stack.plane.queueTurn(withSetup.id, {
    toolCalls: [{ name: "bash", input: { command: "true" } }],
  });
  stack.plane.queueTurn(without.id, { toolCalls: [{ name: "bash", input: { command: "true" } }] });
  let claimed = 0;
  while (claimed < 2) claimed += (await worker.drain()).claimed;

  expect(asked).toHaveLength(2);
  const bySession = new Map(inputs.map((input) => [input.scope.sessionId, input]));
  expect(bySession.get(withSetup.id)).toMatchObject({
    environmentPackages: { pip: ["requests==2.32.3"] },
    sandboxImageAlias: "python-3.12",
  });
  expect(bySession.get(without.id)).not.toHaveProperty("environmentPackages");
  expect(bySession.get(without.id)).not.toHaveProperty("sandboxImageAlias");
  expect(
    stack.reports.map((report) => report.outcome.type === "ran" && report.outcome.result.type),
  ).toEqual(["completed", "completed"]);
});

it("refuses an environmentFor that is not a function", async () => {
  await expect(stack.worker({ environmentFor: "pip" as never })).rejects.toMatchObject({
    code: "invalid_config",
  });
});
