import type { ManagedRuntimeProfile } from "@open-managed-agents/runtime-resource-contract";

/** One work item of one session. */
export interface WorkItem {
  readonly sessionId: string;
  readonly workId: string;
  readonly profile: ManagedRuntimeProfile;
}
