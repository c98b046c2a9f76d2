import {
  InvalidRequestError,
  environmentPackagesSchema,
  runtimeMemoryStoresSchema,
  parseManagedRuntimeProfile,
  parseRecord,
  parseRuntimeResourceScope,
  sandboxImageAliasSchema,
} from "@open-managed-agents/runtime-resource-contract";
import * as z from "zod";
import { executeRun } from "./execute-run.js";
import { resolveHostOptions } from "./host-options.js";
import { createRunContext } from "./run-context.js";
import type {
  ManagedRuntimeHost,
  ManagedRuntimeHostOptions,
  ManagedRuntimeRunInput,
} from "./types.js";

const sessionSnapshotSchema = z.object({
  id: z.string().min(1),
  environmentId: z.string().min(1),
  metadata: z.record(z.string(), z.string()),
  resources: z.array(z.looseObject({ type: z.string().min(1) })),
});

/**
 * Creates the fenced managed-runtime host. Options are validated here (`invalid_config` naming the
 * field). Each `run` executes, in this order: admission, fence acquire, workspace materialize, outputs
 * prepare, credential-egress prepare, optional runtime-checkpoint restore, sandbox acquire, attaches,
 * memory stores, environment packages, session inputs, harness run, memory-store write-back, retained-runtime suspend, workspace checkpoint, runtime checkpoint,
 * outputs collect/finalize, fence publish; then cleanup: egress revoke, terminate (or orphan), releases.
 */
export function createManagedRuntimeHost(options: ManagedRuntimeHostOptions): ManagedRuntimeHost {
  const resolved = resolveHostOptions(options);
  return {
    async run(input: ManagedRuntimeRunInput) {
      parseRuntimeResourceScope(input?.scope);
      parseManagedRuntimeProfile(input.profile);
      if (input.session !== undefined) {
        parseRecord(sessionSnapshotSchema, input.session, { record: "session" });
        if (input.session.id !== input.scope.sessionId) {
          throw new InvalidRequestError({
            message: "the session does not belong to the scope",
            context: { path: "session.id" },
          });
        }
      }
      if (input.environmentPackages !== undefined)
        parseRecord(environmentPackagesSchema, input.environmentPackages, {
          record: "environment packages",
        });
      if (input.memoryStores !== undefined)
        parseRecord(runtimeMemoryStoresSchema, input.memoryStores, { record: "memory stores" });
      if (input.sandboxImageAlias !== undefined)
        parseRecord(sandboxImageAliasSchema, input.sandboxImageAlias, {
          record: "sandbox image alias",
        });
      return executeRun(createRunContext(resolved, input));
    },
  };
}
