import type { ResolvedInstallerOptions } from "./options.js";
import {
  type EnvironmentPackageManager,
  shellQuote,
} from "@open-managed-agents/runtime-resource-contract";
import { shellCommand } from "./shell.js";

/** How one manager installs a spec, or why it skips it. */
export type ManagerPlan =
  | {
      readonly type: "install";
      /** Where the manager's executables land; null when they land on the image's own PATH (apt). */
      readonly binDir: string | null;
      /** The command line for one spec (already grammar-checked). */
      command(spec: string): string;
    }
  | { readonly type: "skip"; readonly reason: string };

/** Directory of one manager's tools below the tool root. */
export function toolDir(
  options: ResolvedInstallerOptions,
  manager: EnvironmentPackageManager,
): string {
  return `${options.toolRoot}/${manager}`;
}

/** The install plan of each manager. Language packages go below the tool root, in the workspace. */
export function managerPlan(
  options: ResolvedInstallerOptions,
  manager: EnvironmentPackageManager,
): ManagerPlan {
  const dir = toolDir(options, manager);
  switch (manager) {
    case "apt":
      return {
        type: "install",
        binDir: null,
        // A stale or missing index is not fatal by itself: the install below reports what is really missing.
        command: (spec) =>
          `export DEBIAN_FRONTEND=noninteractive; apt-get update -qq >/dev/null 2>&1 || true; apt-get install -y -q --no-install-recommends ${shellQuote(spec)}`,
      };
    case "pip": {
      const { indexUrl, findLinks = [], noIndex = false } = options.pip;
      const flags = [
        "--disable-pip-version-check",
        "--no-input",
        ...(noIndex ? ["--no-index"] : []),
        ...(indexUrl ? ["--index-url", indexUrl] : []),
        ...findLinks.flatMap((link) => ["--find-links", link]),
      ];
      const python = `${dir}/bin/python`;
      // `--copies`: a venv's default interpreter links point outside /workspace, which checkpoints refuse.
      return {
        type: "install",
        binDir: `${dir}/bin`,
        command: (spec) =>
          `{ [ -x ${shellQuote(python)} ] || ${shellCommand([options.python, "-m", "venv", "--copies", dir])}; } && ${shellCommand([python, "-m", "pip", "install", ...flags, spec])}`,
      };
    }
    case "npm": {
      const { registry, offline = false } = options.npm;
      const flags = [
        "--no-audit",
        "--no-fund",
        "--no-update-notifier",
        ...(offline ? ["--offline"] : []),
        ...(registry ? ["--registry", registry] : []),
      ];
      return {
        type: "install",
        binDir: `${dir}/bin`,
        command: (spec) =>
          shellCommand(["npm", "install", "--global", "--prefix", dir, ...flags, spec]),
      };
    }
    case "cargo":
      return {
        type: "install",
        binDir: `${dir}/bin`,
        command: (spec) => shellCommand(["cargo", "install", "--root", dir, spec]),
      };
    case "go":
      return {
        type: "install",
        binDir: `${dir}/bin`,
        command: (spec) =>
          `GOPATH=${shellQuote(`${dir}/path`)} GOBIN=${shellQuote(`${dir}/bin`)} ${shellCommand(["go", "install", spec])}`,
      };
    case "gem":
      return {
        type: "skip",
        reason: "gem packages are accepted and skipped: the sandbox base image has no Ruby",
      };
  }
}
