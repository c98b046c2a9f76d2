import { workerdRunConfig } from "./vitest.workerd.js";

/**
 * `pnpm bench:environment`: the claimed-work load benchmark in workerd (bench/environment-load.ts).
 * `BENCH_ITEMS` (default 50) items; `BENCH_CONCURRENCY` (default 10) is the Worker's ENVIRONMENT_MAX_CLAIMS.
 */
export default workerdRunConfig({
  include: ["bench/environment-load.ts"],
  bindings: {
    ENVIRONMENT_MAX_CLAIMS: process.env.BENCH_CONCURRENCY ?? "10",
    BENCH_ITEMS: process.env.BENCH_ITEMS ?? "50",
  },
  testTimeout: 1_800_000,
});
