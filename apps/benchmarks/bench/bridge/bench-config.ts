import { existsSync } from "node:fs";
import { parseRecord } from "@open-managed-agents/runtime-resource-contract";
import * as z from "zod";

const integerFromEnv = (fallback: number, minimum: number) =>
  z
    .string()
    .regex(/^\d+$/, "must be a whole number")
    .transform(Number)
    .pipe(z.number().int().min(minimum))
    .optional()
    .transform((value) => value ?? fallback);

const configSchema = z.object({
  OMA_BENCH_WORKSPACE_MIB: integerFromEnv(256, 32),
  /** 0 skips the single `/persist` attempt. */
  OMA_BENCH_PERSIST_TIMEOUT_S: integerFromEnv(150, 0),
  /** Which workspaces to run: `random` bytes, `source`-like compressible text, or `both` (in that order). */
  OMA_BENCH_WORKLOAD: z
    .enum(["random", "source", "both"])
    .optional()
    .transform((value) => value ?? "both"),
  /**
   * Folder for everything the run writes: the sandboxes' trees, the blob store, the driver's spools. The
   * default, /dev/shm when present, keeps the host disk's writeback (tens of seconds for 200,000 small
   * files on a shared VM disk, and different from run to run) out of figures about the bridge.
   */
  OMA_BENCH_SCRATCH: z.string().min(1).optional(),
  /** `1` prints each phase's sampled memory over time (RSS, heap, array buffers) with the steps then running. */
  OMA_BENCH_MEMORY_TIMELINE: z.enum(["0", "1"]).optional(),
});

/** Settings read from the environment. */
export interface BenchConfig {
  readonly workspaceMiB: number;
  readonly persistTimeoutSeconds: number;
  readonly workloads: readonly ("random" | "source")[];
  /** Where the run's files go (see OMA_BENCH_SCRATCH). */
  readonly scratch: string;
  /** Whether the report prints each phase's memory timeline (OMA_BENCH_MEMORY_TIMELINE=1). */
  readonly memoryTimeline: boolean;
}

/** Reads and validates the bench settings; a bad value throws `invalid_config` naming the variable. */
export function readBenchConfig(env: NodeJS.ProcessEnv = process.env): BenchConfig {
  const parsed = parseRecord(
    configSchema,
    {
      OMA_BENCH_WORKSPACE_MIB: env.OMA_BENCH_WORKSPACE_MIB || undefined,
      OMA_BENCH_PERSIST_TIMEOUT_S: env.OMA_BENCH_PERSIST_TIMEOUT_S || undefined,
      OMA_BENCH_WORKLOAD: env.OMA_BENCH_WORKLOAD || undefined,
      OMA_BENCH_SCRATCH: env.OMA_BENCH_SCRATCH || undefined,
      OMA_BENCH_MEMORY_TIMELINE: env.OMA_BENCH_MEMORY_TIMELINE || undefined,
    },
    { record: "bench environment", code: "invalid_config" },
  );
  const workloads =
    parsed.OMA_BENCH_WORKLOAD === "both"
      ? (["random", "source"] as const)
      : [parsed.OMA_BENCH_WORKLOAD];
  const scratch = parsed.OMA_BENCH_SCRATCH ?? (existsSync("/dev/shm") ? "/dev/shm" : "/var/tmp");
  return {
    workspaceMiB: parsed.OMA_BENCH_WORKSPACE_MIB,
    persistTimeoutSeconds: parsed.OMA_BENCH_PERSIST_TIMEOUT_S,
    workloads,
    scratch,
    memoryTimeline: parsed.OMA_BENCH_MEMORY_TIMELINE === "1",
  };
}
