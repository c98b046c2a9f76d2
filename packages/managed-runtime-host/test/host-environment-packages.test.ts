import {
  type EnvironmentPackagesInstallInput,
  type HarnessRunInput,
  ManagedRuntimeError,
  SandboxFailedError,
  type SandboxHarnessDriverPort,
} from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it } from "vitest";
import { callSequence, createHostFixture } from "./support/fixture.js";

const packages = { pip: ["requests==2.32.3"], npm: ["typescript@5"] };
const setup = {
  mode: "full",
  skipped: [{ manager: "gem", spec: "rake", reason: "no Ruby" }],
  pathEntries: ["/workspace/.oma/tools/pip/bin"],
  path: "/workspace/.oma/tools/pip/bin:/usr/bin",
} as const;

/** An installer port that records what the host hands it (the real one lives in environment-packages). */
function recordingInstaller(outcome: () => Promise<typeof setup>) {
  const calls: EnvironmentPackagesInstallInput[] = [];
  return {
    calls,
    port: { install: (input: EnvironmentPackagesInstallInput) => (calls.push(input), outcome()) },
  };
}

/** Wraps the fake harness to keep the input the host ran it with. */
function capturingHarness(inner: SandboxHarnessDriverPort) {
  const inputs: HarnessRunInput[] = [];
  const port: SandboxHarnessDriverPort = {
    driverCapabilities: (scope) => inner.driverCapabilities(scope),
    run: (input) => (inputs.push(input), inner.run(input)),
  };
  return { inputs, port };
}

describe("environment packages in the host transaction", () => {
  it("installs after the attaches, before the harness, and hands the harness the setup", async () => {
    let callsBeforeInstall: string[] = [];
    const installer = recordingInstaller(async () => {
      callsBeforeInstall = callSequence(fixture.journal);
      return setup;
    });
    const probe = createHostFixture();
    const harness = capturingHarness(probe.deps.ports.harnessDriver);
    const fixture = createHostFixture({
      host: { environmentPackages: installer.port, harnessDriver: harness.port },
    });
    const result = await fixture.run({
      environmentPackages: packages,
      sandboxImageAlias: "python-3.12",
    });
    expect(callsBeforeInstall.slice(-4)).toEqual([
      "sandbox.acquire",
      "workspace.attach",
      "outputs.attach",
      "credentialEgress.attach",
    ]);
    expect(result).toMatchObject({ type: "completed" });
    expect(installer.calls).toHaveLength(1);
    expect(installer.calls[0]).toMatchObject({
      packages,
      imageAlias: "python-3.12",
      sandbox: { runtimeId: expect.any(String) },
    });
    expect(installer.calls[0]?.fence.generation).toBe(1);
    expect(harness.inputs.map((input) => input.environmentSetup)).toEqual([setup]);
    expect(
      fixture.logger.entries.some(
        (entry) => entry.event === "environment.packages" && entry.fields.mode === "full",
      ),
    ).toBe(true);
    expect(
      fixture.logger.entries.find((entry) => entry.event === "environment.packages.skipped"),
    ).toMatchObject({ level: "warn", fields: { manager: "gem", spec: "rake", reason: "no Ruby" } });
  });

  it("skips the stage when the run carries no packages", async () => {
    const installer = recordingInstaller(async () => setup);
    const fixture = createHostFixture({ host: { environmentPackages: installer.port } });
    expect(await fixture.run({ environmentPackages: { pip: [] } })).toMatchObject({
      type: "completed",
    });
    expect(installer.calls).toEqual([]);
  });

  it("refuses a run with packages at admission when no installer is configured", async () => {
    const fixture = createHostFixture();
    const result = await fixture.run({ environmentPackages: packages });
    expect(result.type).toBe("failed");
    if (result.type !== "failed") return;
    expect(ManagedRuntimeError.hasCode(result.error, "capability_unsupported")).toBe(true);
    expect(result.error.context).toMatchObject({
      requirement: "environment_packages",
      stage: "admission",
    });
  });

  it("fails the work item at the install stage, before the harness, when an install fails", async () => {
    const failure = new SandboxFailedError({
      message: "pip install of requests==2.32.3 failed with exit code 1: no index",
      context: { manager: "pip", package: "requests==2.32.3" },
    });
    const installer = recordingInstaller(() => Promise.reject(failure));
    const probe = createHostFixture();
    const harness = capturingHarness(probe.deps.ports.harnessDriver);
    const fixture = createHostFixture({
      host: { environmentPackages: installer.port, harnessDriver: harness.port },
    });
    const result = await fixture.run({ environmentPackages: packages });
    expect(result.type).toBe("failed");
    if (result.type !== "failed") return;
    expect(ManagedRuntimeError.hasCode(result.error, "sandbox_failed")).toBe(true);
    expect(result.error.context).toMatchObject({
      stage: "environment-packages-install",
      manager: "pip",
      package: "requests==2.32.3",
    });
    expect(harness.inputs).toEqual([]);
    expect(result.cleanupErrors).toEqual([]);
  });

  it("rejects hostile package specs as invalid_request before admission", async () => {
    const fixture = createHostFixture({
      host: { environmentPackages: recordingInstaller(async () => setup).port },
    });
    await expect(
      fixture.run({ environmentPackages: { pip: ["requests; rm -rf /"] } }),
    ).rejects.toMatchObject({ code: "invalid_request" });
    await expect(
      fixture.run({ environmentPackages: packages, sandboxImageAlias: "x y" }),
    ).rejects.toMatchObject({ code: "invalid_request" });
  });
});
