import { InvalidRequestError } from "@open-managed-agents/runtime-resource-contract";

export const WORKSPACE_ROOT = "/workspace";
export const OUTPUTS_ROOT = "/mnt/session/outputs";
/** Memory stores projected by file sync: `/mnt/memory/<storeName>/`. */
export const MEMORY_ROOT = "/mnt/memory";

/** Where a path lives: the bridge's file routes reach only `/workspace`; outputs and memory go through exec. */
export type BridgePathKind = "workspace" | "outputs" | "memory";

/**
 * Validates an absolute sandbox path and says how the bridge can reach it. Paths must be under
 * `/workspace/`, `/mnt/session/outputs/` or `/mnt/memory/`, with no empty, `.` or `..` segment.
 */
export function classifyPath(path: string): {
  readonly kind: BridgePathKind;
  readonly relative: string;
} {
  for (const [kind, root] of [
    ["workspace", WORKSPACE_ROOT],
    ["outputs", OUTPUTS_ROOT],
    ["memory", MEMORY_ROOT],
  ] as const) {
    if (!path.startsWith(`${root}/`)) continue;
    const relative = path.slice(root.length + 1);
    const segments = relative.split("/");
    if (segments.some((segment) => segment === "" || segment === "." || segment === "..")) break;
    return { kind, relative };
  }
  throw new InvalidRequestError({
    message:
      "sandbox path must be a file under /workspace/, /mnt/session/outputs/ or /mnt/memory/ without empty, '.' or '..' segments",
    context: { path: path.slice(0, 256) },
  });
}

/** Validates a working directory: `/workspace` or below. */
export function assertWorkspaceCwd(cwd: string): void {
  if (cwd === WORKSPACE_ROOT) return;
  classifyPath(cwd.endsWith("/") ? cwd.slice(0, -1) : cwd);
  if (!cwd.startsWith(`${WORKSPACE_ROOT}/`)) {
    throw new InvalidRequestError({
      message: "working directory must be /workspace or below",
      context: { cwd: cwd.slice(0, 256) },
    });
  }
}
