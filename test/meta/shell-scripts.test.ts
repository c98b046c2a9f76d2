import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { shellcheck, shellcheckInstalled } from "../../vitest.shellcheck.js";
import { REPO_ROOT } from "./workspace.js";

// Every shell file the repository tracks, wherever it lives (programs run in a sandbox, launchers, test
// probes, bootstrap), passes shellcheck as the shell its first line names.
const scripts = execFileSync("git", ["ls-files", "-z", "--", "*.sh"], {
  cwd: REPO_ROOT,
  encoding: "utf8",
})
  .split("\0")
  .filter((path) => path !== "");

describe("shell files", () => {
  it("are found", () => {
    expect(scripts).toContain("scripts/bootstrap.sh");
  });

  it.runIf(shellcheckInstalled).each(scripts)("%s passes shellcheck", (path) =>
    shellcheck(join(REPO_ROOT, path)),
  );
});
