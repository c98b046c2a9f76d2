import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
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

describe("programs run in the sandbox", () => {
  const scripts = readdirSync(folder).filter((name) => name.endsWith(".sh"));

  it("are shell files", () => {
    expect(scripts.sort()).toEqual(["capture.sh", "receive.sh", "restore.sh"]);
  });

  it.runIf(installed)("pass shellcheck as POSIX sh", () => {
    // Throws with shellcheck's findings when there are any.
    execFileSync("shellcheck", ["-s", "sh", ...scripts.map((name) => join(folder, name))], { encoding: "utf8" });
  });
});
