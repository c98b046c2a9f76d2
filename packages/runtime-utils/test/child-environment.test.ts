import { describe, expect, it } from "vitest";
import { CHILD_ENVIRONMENT_NAMES, childEnvironment } from "../src/node.js";

describe("childEnvironment", () => {
  it("keeps only the named variables that are set, never a key", () => {
    const source = {
      PATH: "/usr/bin:/bin",
      HOME: "/root",
      ANTHROPIC_API_KEY: "sk-secret",
      ANTHROPIC_ENVIRONMENT_KEY: "env-secret",
      LANG: undefined,
    };
    expect(childEnvironment(CHILD_ENVIRONMENT_NAMES, source)).toEqual({
      PATH: "/usr/bin:/bin",
      HOME: "/root",
    });
    expect(childEnvironment(["ANTHROPIC_API_KEY"], source)).toEqual({
      ANTHROPIC_API_KEY: "sk-secret",
    });
  });

  it("reads this process's environment by default", () => {
    expect(childEnvironment()).toEqual(
      Object.fromEntries(
        CHILD_ENVIRONMENT_NAMES.filter((name) => process.env[name] !== undefined).map((name) => [
          name,
          process.env[name],
        ]),
      ),
    );
  });
});
