import { VERSION } from "@anthropic-ai/sdk/version";
import { describe, expect, it } from "vitest";
import { installedSdkVersion, sdkUnderTest } from "../../../scripts/sdk-matrix/versions.mjs";

describe("the SDK this run tests against", () => {
  it("is the one OMA_TEST_SDK names, as the lockfile pins it", () => {
    expect(VERSION).toBe(installedSdkVersion(sdkUnderTest()));
  });
});
