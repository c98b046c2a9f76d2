import * as z from "zod";
import { nonEmptyString } from "./json.js";

/**
 * Identifies one work item. One lease is one work item; sub-agents share their parent's scope, fence
 * and sandbox. Every port call carries it.
 */
export interface RuntimeResourceScope {
  /** Tenant workspace (organisation) the session belongs to. */
  readonly workspaceId: string;
  /** Environment the session runs in. */
  readonly environmentId: string;
  /** Session whose workspace and outputs this work item reads and writes. */
  readonly sessionId: string;
  /** The claimed work item. */
  readonly workId: string;
}

/** Schema for {@link RuntimeResourceScope}. */
export const runtimeResourceScopeSchema = z.object({
  workspaceId: nonEmptyString,
  environmentId: nonEmptyString,
  sessionId: nonEmptyString,
  workId: nonEmptyString,
});

/** Why compute is being stopped. `lease_lost` means another owner may already hold the fence. */
export type TerminationReason = "completed" | "failed" | "lease_lost";

/** Schema for {@link TerminationReason}. */
export const terminationReasonSchema = z.enum(["completed", "failed", "lease_lost"]);

/** Options every long-running port call accepts. */
export interface Abortable {
  /** Aborted when the host loses the fence or lease, or the caller gives up. Implementations must stop promptly. */
  readonly signal: AbortSignal;
}
