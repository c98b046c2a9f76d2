// The reference driver run exactly as a deployer runs a driver package: one call registers every case.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { createManagedRuntimeProviderDriver } from "../src/testing/index.js";
import { defineManagedRuntimeConformanceSuite } from "../src/vitest/index.js";

const rootDir = mkdtempSync(join(tmpdir(), "openma-conformance-suite-"));
afterAll(() => rmSync(rootDir, { recursive: true, force: true }));

defineManagedRuntimeConformanceSuite({
  name: "reference driver",
  driver: createManagedRuntimeProviderDriver,
  factoryOptions: { rootDir },
});
