import type { BetaSelfHostedWork } from "@anthropic-ai/sdk/resources/beta/environments/work";
import type { Sandbox } from "@cloudflare/sandbox";
import type { WorkItem } from "./work/work-item.js";

// The Durable Object bindings are typed by what callers use of each object, not by its class: the
// classes import the code that reaches them, so naming them here would tie every file into one circle.

/** What one claim pass did. */
export interface ClaimSummary {
  /** Items the pass claimed and handed to their Durable Objects. */
  readonly claimed: number;
  /** Of those, items whose object was running them already (a replay). */
  readonly duplicates: number;
  /** The pass stopped at the budget: items may still be queued. */
  readonly saturated: boolean;
}

/** How an `EnvironmentRunner` answered a claim. */
export type ClaimAnswer = "started" | "already_running";

/** The `WorkRunner` object of one work item (`work/work-runner.ts`). */
export interface WorkRunnerRpc extends Rpc.DurableObjectBranded {
  /** Queues the run. Calling it again for the same item is harmless. */
  start(item: WorkItem): Promise<void>;
}

/** The `EnvironmentRunner` object of one claimed item (`environment/environment-runner.ts`). */
export interface EnvironmentRunnerRpc extends Rpc.DurableObjectBranded {
  /** Starts the item's run, unless the object is running it already. */
  claim(work: BetaSelfHostedWork): Promise<ClaimAnswer>;
}

/** The one `ClaimCoordinator` object (`environment/claim-coordinator.ts`). */
export interface ClaimCoordinatorRpc extends Rpc.DurableObjectBranded {
  /** Runs a claim pass, or joins the pass under way. */
  drain(): Promise<ClaimSummary>;
  /** A claimed item ended: claims again when the last pass stopped at the budget. */
  slotFreed(): Promise<ClaimSummary | null>;
}

/** The Worker's bindings (wrangler.jsonc): Durable Object namespaces, D1 and R2. */
export interface WorkerBindings {
  readonly Sandbox: DurableObjectNamespace<Sandbox>;
  readonly WORK_RUNNER: DurableObjectNamespace<WorkRunnerRpc>;
  /** One object per claimed work item, named by its work id. */
  readonly ENVIRONMENT_RUNNER: DurableObjectNamespace<EnvironmentRunnerRpc>;
  /** The one object that runs claim passes one at a time (named `environment-queue`). */
  readonly CLAIM_COORDINATOR: DurableObjectNamespace<ClaimCoordinatorRpc>;
  readonly DB: D1Database;
  readonly OUTPUTS_BUCKET: R2Bucket;
  readonly BACKUP_BUCKET: R2Bucket;
}
