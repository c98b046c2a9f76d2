import { createD1SqlClient, createSqlFencePort, createSqlOrphanPort } from "@open-managed-agents/managed-runtime-host";
import type { RuntimeOrphanPort, RuntimeResourceFencePort } from "@open-managed-agents/runtime-resource-contract";
import type { WorkerEnv } from "../env.js";

/** The fence and orphan stores, both on the `DB` D1 database (migrations/0001_runtime_resources.sql). */
export function runtimeStores(env: WorkerEnv): { readonly fences: RuntimeResourceFencePort; readonly orphans: RuntimeOrphanPort } {
  const client = createD1SqlClient(env.DB);
  return { fences: createSqlFencePort({ client }), orphans: createSqlOrphanPort({ client }) };
}
