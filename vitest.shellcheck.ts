import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";

/** Whether shellcheck runs here (scripts/bootstrap.sh installs it); without it there is nothing to check. */
export const shellcheckInstalled: boolean = (() => {
  try {
    execFileSync("shellcheck", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

/** The `.sh` files of `folder`, sorted by name. */
export const shellFiles = (folder: string): string[] =>
  readdirSync(folder)
    .filter((name) => name.endsWith(".sh"))
    .sort();

/**
 * Runs shellcheck on one script as the shell its first line names (`#!/bin/bash`: bash, otherwise POSIX
 * sh); throws with shellcheck's findings when there are any.
 */
export function shellcheck(path: string): void {
  const shell = readFileSync(path, "utf8").startsWith("#!/bin/bash\n") ? "bash" : "sh";
  execFileSync("shellcheck", ["-s", shell, path], { encoding: "utf8" });
}
