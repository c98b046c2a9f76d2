import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { VERSION } from "@anthropic-ai/sdk/version";
import { installAmaWorkerBin } from "@open-managed-agents/ama-worker";
import { describe, expect, it } from "vitest";
import { installedSdkVersion, sdkUnderTest } from "../../../scripts/sdk-matrix/versions.mjs";

describe("the SDK this run tests against", () => {
  it("is the one OMA_TEST_SDK names, in the worker and in the oma-ama-worker bin the sandbox runs", async () => {
    const expected = installedSdkVersion(sdkUnderTest());
    expect(VERSION).toBe(expected);
    const directory = await mkdtemp(join(tmpdir(), "oma-sdk-under-test-"));
    try {
      const bin = await installAmaWorkerBin(directory);
      const { stdout } = await promisify(execFile)(bin, ["--version"]);
      expect(stdout).toMatch(
        new RegExp(`@anthropic-ai/sdk ${expected.replaceAll(".", "\\.")}\\n$`),
      );
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
