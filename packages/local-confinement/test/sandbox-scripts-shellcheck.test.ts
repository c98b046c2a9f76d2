import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

// scripts/bootstrap.sh installs shellcheck; without it there is nothing to run here.
const installed = (() => {
  try {
    execFileSync("shellcheck", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

const folder = join(import.meta.dirname, "../src/scripts");
const scripts = readdirSync(folder).filter((name) => name.endsWith(".sh"));
// Each script's shell is the one its first line names: bash only where bash is required.
const shellOf = (name: string): string => (readFileSync(join(folder, name), "utf8").startsWith("#!/bin/bash\n") ? "bash" : "sh");

describe("programs run in a confinement", () => {
  it("are shell files", () => {
    expect(scripts.sort()).toEqual(["build-root.sh", "enter-bash.sh", "enter-sh.sh", "join-cgroups.sh", "staged-mounts.sh"]);
  });

  it.runIf(installed).each(scripts)("%s passes shellcheck", (name) => {
    // Throws with shellcheck's findings when there are any.
    execFileSync("shellcheck", ["-s", shellOf(name), join(folder, name)], { encoding: "utf8" });
  });
});
