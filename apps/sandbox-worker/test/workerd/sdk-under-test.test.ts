import { VERSION } from "@anthropic-ai/sdk/version";
import { describe, expect, it } from "vitest";
import { testEnv } from "../support/api.js";

describe("the SDK this run tests against", () => {
  it("is the one OMA_TEST_SDK names, inside the Worker", () => {
    expect(VERSION).toBe(testEnv.TEST_SDK_VERSION);
  });
});
