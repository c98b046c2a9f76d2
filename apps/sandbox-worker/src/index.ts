import { workerContext } from "./config.js";
import type { WorkerEnv } from "./env.js";
import { handleFetch } from "./http/router.js";
import { runScheduled } from "./scheduled/run-scheduled.js";

export { Sandbox } from "@cloudflare/sandbox";
export { WorkRunner } from "./work/work-runner.js";
export { EnvironmentRunner } from "./environment/environment-runner.js";
export { ClaimCoordinator } from "./environment/claim-coordinator.js";
export type { WorkerEnv } from "./env.js";

export default {
  fetch: (request: Request, env: WorkerEnv, ctx: ExecutionContext) =>
    handleFetch(request, workerContext(env), ctx),
  scheduled: (_controller, env, ctx) => ctx.waitUntil(runScheduled(workerContext(env))),
} satisfies ExportedHandler<WorkerEnv>;
