import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { measureWorkerBundle } from "../../../scripts/worker-bundle-size.mjs";

const APP_DIR = fileURLToPath(new URL("..", import.meta.url));

/**
 * The Worker as `wrangler deploy` uploads it, measured on 2026-12-07 at 978,534 bytes (209,310 gzip) with
 * wrangler 4.86.0. The budget leaves about 5 %: a change that needs more raises it here, on purpose.
 */
const BUDGET = { bytes: 1_030_000, gzipBytes: 220_000 };

describe("bundle budget", () => {
  it("stays within its budget, and esbuild warns about nothing", async () => {
    const size = await measureWorkerBundle(APP_DIR);
    expect(size.warnings).toEqual([]);
    expect(size.bytes).toBeLessThanOrEqual(BUDGET.bytes);
    expect(size.gzipBytes).toBeLessThanOrEqual(BUDGET.gzipBytes);
  }, 180_000);
});
