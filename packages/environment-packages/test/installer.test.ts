import { rmSync } from "node:fs";
import { join } from "node:path";
import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEnvironmentPackagesInstaller } from "../src/index.js";
import { buildWheel, packNpmTool } from "../src/testing.js";
import { createLocalProvider, scratchDir } from "./support/runtime.js";

const provider = createLocalProvider();
const context = (sessionId: string) => ({ sessionId, workdir: "/workspace" });
let files: string;
let tarball: string;

beforeAll(() => {
  files = scratchDir();
  buildWheel(files, "oma-demo-tool", "1.0.0", "oma-demo-py");
  tarball = packNpmTool(files, "oma-demo-npm", "2.0.0", "oma-demo-js");
});

afterAll(() => rmSync(files, { recursive: true, force: true }));

function installer() {
  return createEnvironmentPackagesInstaller({
    warmMarkerPath: join(files, "tmp", ".oma-setup-warm"),
    pip: { noIndex: true, findLinks: [files] },
  });
}

describe("environment packages on a local runtime", () => {
  it("installs pip and npm packages into the workspace and puts their tools on PATH", async () => {
    const runtime = await provider.create(context("ses-full"));
    try {
      const report = await installer().setup({
        sandbox: runtime,
        packages: { pip: ["oma-demo-tool==1.0.0"], npm: [tarball], gem: ["rake"] },
        runtimeId: runtime.runtimeHandle().runtimeId,
      });
      expect(report.mode).toBe("full");
      expect(report.installed).toEqual([
        { manager: "pip", spec: "oma-demo-tool==1.0.0" },
        { manager: "npm", spec: tarball },
      ]);
      expect(report.skipped).toEqual([
        { manager: "gem", spec: "rake", reason: expect.stringContaining("no Ruby") },
      ]);
      expect(report.pathEntries).toEqual([
        "/workspace/.oma/tools/pip/bin",
        "/workspace/.oma/tools/npm/bin",
      ]);
      const tools = await runtime.exec(
        "oma-demo-py && oma-demo-js && python -c 'import oma_demo_tool; print(oma_demo_tool.__file__)'",
        { env: { PATH: report.path ?? "" } },
      );
      expect(tools.exitCode, tools.output).toBe(0);
      expect(tools.stdout).toBe(
        "oma-demo-tool 1.0.0\noma-demo-npm 2.0.0\n/workspace/.oma/tools/pip/lib/python3.11/site-packages/oma_demo_tool/__init__.py\n".replace(
          "python3.11",
          pythonDir(tools.stdout),
        ),
      );
    } finally {
      await runtime.destroy();
    }
  });

  it("is a no-op when the warm marker matches and re-runs only apt after a workspace restore", async () => {
    const packages = { pip: ["oma-demo-tool==1.0.0"], npm: [tarball] };
    const first = await provider.create(context("ses-markers"));
    let restored;
    try {
      const id = first.runtimeHandle().runtimeId;
      expect((await installer().setup({ sandbox: first, packages, runtimeId: id })).mode).toBe(
        "full",
      );
      const again = await installer().setup({ sandbox: first, packages, runtimeId: id });
      expect(again).toMatchObject({ mode: "warm", installed: [] });
      const checkpoint = await first.checkpoint({ kind: "filesystem" });
      restored = await provider.restore(checkpoint, context("ses-markers"));
    } finally {
      await first.destroy();
    }
    try {
      // The new runtime has the workspace (and the restored marker) but not the first runtime's setup.
      const report = await installer().setup({
        sandbox: restored,
        packages,
        runtimeId: restored.runtimeHandle().runtimeId,
      });
      expect(report).toMatchObject({ mode: "restored", installed: [] });
      const tools = await restored.exec("oma-demo-py && oma-demo-js", {
        env: { PATH: report.path ?? "" },
      });
      expect(tools.stdout, tools.output).toBe("oma-demo-tool 1.0.0\noma-demo-npm 2.0.0\n");
      // A restore without a tool directory (a checkpoint that excluded it) is no restore of the setup.
      await restored.exec("rm -rf /workspace/.oma/tools/npm");
      const partial = await installer().setup({
        sandbox: restored,
        packages,
        runtimeId: "another-runtime",
      });
      expect(partial).toMatchObject({ mode: "full" });
      // A changed package list matches neither marker: full setup.
      const changed = await installer().setup({
        sandbox: restored,
        packages: { pip: packages.pip },
        runtimeId: restored.runtimeHandle().runtimeId,
      });
      expect(changed).toMatchObject({
        mode: "full",
        installed: [{ manager: "pip", spec: "oma-demo-tool==1.0.0" }],
      });
    } finally {
      await restored.destroy();
    }
  });

  it("makes the catalog image alias part of both markers", async () => {
    const runtime = await provider.create(context("ses-alias"));
    try {
      const id = runtime.runtimeHandle().runtimeId;
      const packages = { npm: [tarball] };
      expect(
        (
          await installer().setup({
            sandbox: runtime,
            packages,
            imageAlias: "python-3.12",
            runtimeId: id,
          })
        ).mode,
      ).toBe("full");
      expect(
        (
          await installer().setup({
            sandbox: runtime,
            packages,
            imageAlias: "python-3.12",
            runtimeId: id,
          })
        ).mode,
      ).toBe("warm");
      expect(
        (
          await installer().setup({
            sandbox: runtime,
            packages,
            imageAlias: "node-22",
            runtimeId: id,
          })
        ).mode,
      ).toBe("full");
    } finally {
      await runtime.destroy();
    }
  });

  it("fails with a typed error naming the manager, the package and the output's tail", async () => {
    const runtime = await provider.create(context("ses-fail"));
    try {
      const error = await installer()
        .setup({ sandbox: runtime, packages: { pip: ["oma-missing-package==9.9"] } })
        .catch((caught: unknown) => caught);
      expect(ManagedRuntimeError.hasCode(error, "sandbox_failed")).toBe(true);
      const typed = error as ManagedRuntimeError;
      expect(typed.message).toContain("pip install of oma-missing-package==9.9 failed");
      expect(typed.context).toMatchObject({ manager: "pip", package: "oma-missing-package==9.9" });
      expect(String(typed.context.outputTail)).toMatch(
        /No matching distribution|Could not find a version/,
      );
      // A failed setup writes no marker: the next attempt runs in full again.
      const retry = await installer().setup({ sandbox: runtime, packages: { npm: [tarball] } });
      expect(retry.mode).toBe("full");
    } finally {
      await runtime.destroy();
    }
  });

  it.skip("installs apt packages (skipped: this runtime shares the host's /usr; apt needs a confined runtime with its own root)", () => {});
});

/** The venv's `lib/pythonX.Y` directory name, read from the output so the case does not pin a Python version. */
function pythonDir(stdout: string): string {
  return /lib\/(python\d+\.\d+)\//.exec(stdout)?.[1] ?? "python3.11";
}
