import { DEFAULT_CONFINEMENT_LIMITS } from "@open-managed-agents/local-confinement";
import * as z from "zod";

const MIB = 1024 * 1024;
const positiveInteger = z.number().int().positive();

// Each bound once, without its default: the launcher forwards what was given, the server fills the rest.
const limitFields = {
  maxContainers: positiveInteger,
  maxProcessesPerContainer: positiveInteger,
  maxOutputBytes: positiveInteger,
  maxBodyBytes: positiveInteger,
  maxContainerProcesses: positiveInteger,
  maxOpenFiles: positiveInteger,
  maxFileBytes: positiveInteger,
  maxMemoryBytes: positiveInteger,
  maxContainerMemoryBytes: positiveInteger,
  maxContainerCpus: z.number().positive().max(4_096),
};

/** Defaults of the bounds the server enforces (`maxContainerMemoryBytes` and `maxContainerCpus` have none: no bound). */
export const DEFAULT_LOCAL_CONTAINER_LIMITS = {
  maxContainers: 16,
  maxProcessesPerContainer: 32,
  maxOutputBytes: 16 * MIB,
  maxBodyBytes: 64 * MIB,
  maxContainerProcesses: DEFAULT_CONFINEMENT_LIMITS.maxProcesses,
  maxOpenFiles: DEFAULT_CONFINEMENT_LIMITS.maxOpenFiles,
  maxFileBytes: DEFAULT_CONFINEMENT_LIMITS.maxFileBytes,
  maxMemoryBytes: DEFAULT_CONFINEMENT_LIMITS.maxMemoryBytes,
} as const;

/** Any subset of the server's bounds, as given (no defaults applied). */
export const partialLimitsSchema = z.object(limitFields).partial().strict();

/** The server's bounds with their defaults filled in. */
export const limitsSchema = partialLimitsSchema.transform((limits) => ({
  ...DEFAULT_LOCAL_CONTAINER_LIMITS,
  ...limits,
}));

/** The confinement options the launcher and the server both take, with the server's defaults. */
export const confinementOptionFields = {
  confinement: z.enum(["bubblewrap", "unconfined-unsafe"]).default("bubblewrap"),
  // No default here: it follows the confinement (see resolveServerOptions).
  network: z.enum(["none", "host-unsafe"]).optional(),
  egressAllowList: z.array(z.string().min(1).max(300)).max(1_000).optional(),
  requireBun: z.boolean().default(false),
};
