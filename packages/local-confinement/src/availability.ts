import { readFileSync } from "node:fs";
import { CapabilityUnsupportedError } from "@open-managed-agents/runtime-resource-contract";
import { findExecutable } from "./mounts.js";

const TOOLS = ["bwrap", "unshare", "nsenter", "prlimit", "setpriv"] as const;
const INSTALL_HINT =
  "install bubblewrap (`apt-get install -y bubblewrap`, or `npm run bootstrap` as root) and util-linux";

let checked: string | undefined;

/**
 * Throws `capability_unsupported` saying what is missing when bubblewrap confinement cannot run here:
 * Linux, root (the copy-on-write root is an overlayfs mount), overlayfs, and the tools. Checked once.
 */
export function assertConfinementAvailable(): void {
  checked ??= missingRequirement() ?? "";
  if (checked === "") return;
  throw new CapabilityUnsupportedError({
    message: `bubblewrap confinement is unavailable: ${checked}; ${INSTALL_HINT}`,
    context: { confinement: "bubblewrap", missing: checked },
  });
}

/** Whether bubblewrap confinement can run here (see {@link assertConfinementAvailable}). */
export function isConfinementAvailable(): boolean {
  checked ??= missingRequirement() ?? "";
  return checked === "";
}

function missingRequirement(): string | undefined {
  if (process.platform !== "linux") return `it needs Linux (this is ${process.platform})`;
  if (process.getuid?.() !== 0)
    return "it needs root (the copy-on-write root is an overlayfs mount)";
  const missing = TOOLS.filter((tool) => findExecutable(tool) === null);
  if (missing.length > 0) return `${missing.join(", ")} not found on PATH`;
  try {
    if (!/\toverlay\n/.test(readFileSync("/proc/filesystems", "utf8")))
      return "the kernel has no overlayfs";
  } catch {
    return "/proc/filesystems is unreadable";
  }
  return undefined;
}
