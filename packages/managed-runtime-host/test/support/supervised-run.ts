import type {
  HarnessRunInput,
  HarnessSupervisorCommand,
} from "@open-managed-agents/runtime-resource-contract";
import { createSupervisedSandboxHarnessDriver } from "../../src/supervisor/supervised-harness-driver.js";
import { settleWithManualTime } from "../../src/testing/manual-drive.js";
import { createManualTime } from "../../src/time.js";
import { type SupervisorSide, createScriptedSupervisorTransport } from "./fake-supervisor.js";
import { scope, supervisedDriver as driver } from "./fixture.js";

export const fence = {
  ...scope,
  ownerId: "owner-a",
  generation: 4,
  token: "fence-token-must-not-leave-the-host",
  expiresAt: "2026-01-01T00:01:00.000Z",
};

/** A supervised driver over a scripted supervisor on manual time; `input` overrides fields of the run input. */
export function harness(
  script: (side: SupervisorSide) => Promise<void>,
  checkpoint?: HarnessRunInput["checkpoint"],
  input: Partial<HarnessRunInput> = {},
) {
  const time = createManualTime();
  const transport = createScriptedSupervisorTransport(script);
  const supervised = createSupervisedSandboxHarnessDriver({
    transport,
    clock: time,
    scheduler: time,
  });
  const controller = new AbortController();
  const runInput: HarnessRunInput = {
    scope,
    fence,
    sandbox: { provider: "fake", runtimeId: "rt-1" },
    workspacePath: "/workspace",
    outputPath: "/mnt/session/outputs",
    driver,
    signal: controller.signal,
    ...(checkpoint ? { checkpoint } : {}),
    ...input,
  };
  const run = () => settleWithManualTime(supervised.run(runInput), time, { stepMs: 250 });
  return { time, transport, controller, run, supervised };
}

/** Reads commands until one of `type`, returning every command read. */
export async function until(
  side: SupervisorSide,
  type: HarnessSupervisorCommand["type"],
): Promise<HarnessSupervisorCommand[]> {
  const seen: HarnessSupervisorCommand[] = [];
  for (;;) {
    const command = await side.command();
    seen.push(command);
    if (command.type === type) return seen;
  }
}

export const ready = { type: "ready", protocol: "openma-harness-supervisor-v1" } as const;
