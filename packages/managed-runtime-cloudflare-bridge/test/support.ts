import type {
  ManagedRuntimeProfile,
  RuntimeResourceScope,
} from "@open-managed-agents/runtime-resource-contract";

/** A profile whose harness is a POSIX shell script run by the ama_worker lane. */
export function shellProfile(script: string): ManagedRuntimeProfile {
  return {
    workspace: { requirement: "durable" },
    outputs: { requirement: "durable" },
    runtimeCheckpoint: "disabled",
    driver: {
      type: "ama_worker",
      process: { command: "sh", args: ["-c", script], cwd: "/workspace" },
    },
  };
}

let sequence = 0;

/** A fresh scope; work items of one test share the session. */
export function scopeFor(sessionId: string): RuntimeResourceScope {
  sequence += 1;
  return {
    workspaceId: "ws-test",
    environmentId: "env-test",
    sessionId,
    workId: `work-${sequence}`,
  };
}
