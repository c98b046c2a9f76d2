import { describe, expect, it } from "vitest";
import { measureWorkerBundle } from "../../../../scripts/worker-bundle-size.mjs";
import { APP_DIR } from "./artefacts.js";

/**
 * The Worker as `wrangler deploy` uploads it, measured on 2026-12-07 at 1,820,551 bytes (392,860 gzip)
 * with wrangler 4.86.0. The budget leaves about 3 %: a change that needs more raises it here, on purpose.
 */
const BUDGET = { bytes: 1_875_000, gzipBytes: 405_000 };

describe("bundle budget", () => {
  it("stays within its budget, and esbuild warns about nothing", async () => {
    const size = await measureWorkerBundle(APP_DIR);
    expect(size.warnings).toEqual([]);
    expect(size.bytes).toBeLessThanOrEqual(BUDGET.bytes);
    expect(size.gzipBytes).toBeLessThanOrEqual(BUDGET.gzipBytes);
  }, 180_000);
});
