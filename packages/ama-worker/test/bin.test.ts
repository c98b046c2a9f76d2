import { execFile } from "node:child_process";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import {
  amaWorkerBuild,
  installedSdkVersion,
  sdkUnderTest,
} from "../../../scripts/sdk-matrix/versions.mjs";
import manifest from "../package.json" with { type: "json" };

const run = promisify(execFile);
// The built package (the test task builds first): the bin file exists only in a build, the one whose bin
// inlines the SDK this run tests against.
const distIndex = pathToFileURL(amaWorkerBuild(sdkUnderTest())).href;
const { installAmaWorkerBin } = (await import(distIndex)) as typeof import("../src/install.js");
const directory = await mkdtemp(join(tmpdir(), "oma-ama-worker-"));
afterAll(() => rm(directory, { recursive: true, force: true }));

describe("oma-ama-worker bin", () => {
  it("runs from a lone copy with only Node on PATH", async () => {
    const bin = await installAmaWorkerBin(directory);
    expect((await stat(bin)).mode & 0o111).not.toBe(0);
    const { stdout } = await run(bin, ["--version"], {
      env: { PATH: `${directory}:/usr/bin:/bin` },
    });
    expect(stdout).toBe(
      `oma-ama-worker ${manifest.version} (ama-worker-v1) @anthropic-ai/sdk ${installedSdkVersion(sdkUnderTest())}\n`,
    );
  });

  it("fails with the missing variable's name and never a value", async () => {
    const bin = await installAmaWorkerBin(directory);
    const failure = await run(bin, [], {
      env: {
        PATH: "/usr/bin:/bin",
        ANTHROPIC_WORK_ID: "w",
        ANTHROPIC_ENVIRONMENT_ID: "e",
        ANTHROPIC_SESSION_ID: "s",
        ANTHROPIC_BASE_URL: "http://127.0.0.1:9",
        ANTHROPIC_WORK_SECRET: "bm90LWpzb24tdG9rZW4",
      },
    }).then(
      () => null,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toContain("ANTHROPIC_WORK_SECRET");
    expect(failure?.stderr).not.toContain("bm90LWpzb24tdG9rZW4");
  });
});
