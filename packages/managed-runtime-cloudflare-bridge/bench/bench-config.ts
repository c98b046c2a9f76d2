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
});

/** Settings read from the environment. */
export interface BenchConfig {
  readonly workspaceMiB: number;
  readonly persistTimeoutSeconds: number;
}

/** Reads and validates the bench settings; a bad value throws `invalid_config` naming the variable. */
export function readBenchConfig(env: NodeJS.ProcessEnv = process.env): BenchConfig {
  const parsed = parseRecord(
    configSchema,
    { OMA_BENCH_WORKSPACE_MIB: env.OMA_BENCH_WORKSPACE_MIB || undefined, OMA_BENCH_PERSIST_TIMEOUT_S: env.OMA_BENCH_PERSIST_TIMEOUT_S || undefined },
    { record: "bench environment", code: "invalid_config" },
  );
  return { workspaceMiB: parsed.OMA_BENCH_WORKSPACE_MIB, persistTimeoutSeconds: parsed.OMA_BENCH_PERSIST_TIMEOUT_S };
}
