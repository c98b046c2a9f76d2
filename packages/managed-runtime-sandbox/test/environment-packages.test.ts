import { rmSync } from "node:fs";
import { join } from "node:path";
import { createMemoryBlobStore } from "@open-managed-agents/blob-store";
import {
  buildWheel,
  createPackageFilesDir,
  packNpmTool,
} from "@open-managed-agents/environment-packages/testing";
import {
  type HostLogger,
  createManagedRuntimeHost,
  createMemoryFencePort,
  createMemoryOrphanPort,
} from "@open-managed-agents/managed-runtime-host";
import {
  ManagedRuntimeError,
  type RuntimeResourceScope,
} from "@open-managed-agents/runtime-resource-contract";
import { createLocalSubprocessSandboxProvider } from "@open-managed-agents/local-confinement/local-subprocess";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProviderManagedRuntime } from "../src/index.js";
import { amaProfile, baseOptions } from "./fixtures/world.js";

// The real host over the composition on local-subprocess runtimes (real processes, real pip and npm, no
// registry): two work items of one session, the second restored from the first's workspace checkpoint.
let files: string;
let tarball: string;
const events: { event: string; fields: Record<string, unknown> }[] = [];
const logger: HostLogger = {
  info: (event, fields) => void events.push({ event, fields }),
  warn: (event, fields) => void events.push({ event, fields }),
  error: (event, fields) => void events.push({ event, fields }),
};

beforeAll(() => {
  files = createPackageFilesDir("oma-mrs-env-packages");
  buildWheel(files, "oma-demo-tool", "1.0.0", "oma-demo-py");
  tarball = packNpmTool(files, "oma-demo-npm", "2.0.0", "oma-demo-js");
});
afterAll(() => rmSync(files, { recursive: true, force: true }));

function createHost() {
  const provider = createLocalSubprocessSandboxProvider({ rootDir: join(files, "runtimes") });
  const runtime = createProviderManagedRuntime(
    baseOptions(provider, {
      outputs: { store: createMemoryBlobStore(), keyPrefix: "env-packages" },
      environmentPackages: {
        warmMarkerPath: join(files, "tmp", ".oma-setup-warm"),
        pip: { noIndex: true, findLinks: [files] },
      },
    }),
  );
  if (!runtime.environmentPackages) throw new Error("the composition built no installer");
  return createManagedRuntimeHost({
    ownerId: "owner-env-packages",
    leaseTtlMs: 120_000,
    heartbeatIntervalMs: 30_000,
    fences: createMemoryFencePort(),
    orphans: createMemoryOrphanPort(),
    sandbox: runtime.sandbox,
    workspace: runtime.workspace,
    outputs: runtime.outputs,
    harnessDriver: runtime.harnessDriver,
    environmentPackages: runtime.environmentPackages,
    logger,
  });
}

const scope = (workId: string): RuntimeResourceScope => ({
  workspaceId: "tenant-1",
  environmentId: "env-1",
  sessionId: "session-env",
  workId,
});
// The harness finds both installed tools on its PATH and records what they print.
const harness = amaProfile("sh", [
  "-c",
  "oma-demo-py > /workspace/seen.txt && oma-demo-js >> /workspace/seen.txt && cat /workspace/seen.txt >&2",
]);
const modes = () =>
  events
    .filter((entry) => entry.event === "environment.packages")
    .map((entry) => entry.fields.mode);

// Real venv creation and installs on a shared machine: generous deadlines.
describe("environment packages through the host", { timeout: 240_000 }, () => {
  it("installs before the harness, and a restored workspace re-runs only apt", async () => {
    const host = createHost();
    const packages = { pip: ["oma-demo-tool==1.0.0"], npm: [tarball], gem: ["rake"] };
    const first = await host.run({
      scope: scope("work-1"),
      profile: harness,
      environmentPackages: packages,
    });
    expect(first, JSON.stringify(first)).toMatchObject({ type: "completed" });
    // The second work item runs in a new runtime restored from the first's workspace checkpoint; the
    // tarball is gone, so a reinstall would fail: the tools come back with the workspace.
    rmSync(tarball);
    const second = await host.run({
      scope: scope("work-2"),
      profile: harness,
      environmentPackages: packages,
    });
    expect(second, JSON.stringify(second)).toMatchObject({ type: "completed" });
    expect(modes()).toEqual(["full", "restored"]);
    expect(
      events
        .filter((entry) => entry.event === "environment.packages.skipped")
        .map((entry) => entry.fields.spec),
    ).toEqual(["rake", "rake"]);
  });

  it("fails the work item at the install stage with the manager, the package and the output's tail", async () => {
    const result = await createHost().run({
      scope: { ...scope("work-3"), sessionId: "session-env-fail" },
      profile: harness,
      environmentPackages: { pip: ["oma-absent==1.0"] },
    });
    expect(result.type).toBe("failed");
    if (result.type !== "failed") return;
    expect(ManagedRuntimeError.hasCode(result.error, "sandbox_failed")).toBe(true);
    expect(result.error.context).toMatchObject({
      stage: "environment-packages-install",
      manager: "pip",
      package: "oma-absent==1.0",
    });
    expect(String(result.error.context.outputTail)).toMatch(
      /No matching distribution|Could not find a version/,
    );
  });
});
