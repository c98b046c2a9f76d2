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
  OMA_BENCH_WORKLOAD: z.enum(["random", "source", "both"]).optional().transform((value) => value ?? "both"),
});

/** Settings read from the environment. */
export interface BenchConfig {
  readonly workspaceMiB: number;
  readonly persistTimeoutSeconds: number;
  readonly workloads: readonly ("random" | "source")[];
}

/** Reads and validates the bench settings; a bad value throws `invalid_config` naming the variable. */
export function readBenchConfig(env: NodeJS.ProcessEnv = process.env): BenchConfig {
  const parsed = parseRecord(
    configSchema,
    {
      OMA_BENCH_WORKSPACE_MIB: env.OMA_BENCH_WORKSPACE_MIB || undefined,
      OMA_BENCH_PERSIST_TIMEOUT_S: env.OMA_BENCH_PERSIST_TIMEOUT_S || undefined,
      OMA_BENCH_WORKLOAD: env.OMA_BENCH_WORKLOAD || undefined,
    },
    { record: "bench environment", code: "invalid_config" },
  );
  const workloads = parsed.OMA_BENCH_WORKLOAD === "both" ? (["random", "source"] as const) : [parsed.OMA_BENCH_WORKLOAD];
  return { workspaceMiB: parsed.OMA_BENCH_WORKSPACE_MIB, persistTimeoutSeconds: parsed.OMA_BENCH_PERSIST_TIMEOUT_S, workloads };
}
