import type { WorkerEnv } from "./env.js";
import { handleFetch } from "./http/router.js";
import { reconcileOrphans } from "./scheduled/reconcile-orphans.js";

export { Sandbox } from "@cloudflare/sandbox";
export { WorkRunner } from "./work/work-runner.js";
export type { WorkerEnv } from "./env.js";

export default {
  fetch: (request: Request, env: WorkerEnv) => handleFetch(request, env),
  scheduled: (_controller, env, ctx) => ctx.waitUntil(reconcileOrphans(env)),
} satisfies ExportedHandler<WorkerEnv>;
