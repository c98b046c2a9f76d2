import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineManagedRuntimeConformanceSuite } from "@open-managed-agents/managed-runtime-conformance/vitest";
import { afterAll } from "vitest";
import { createManagedRuntimeProviderDriver } from "../src/index.js";

const rootDir = mkdtempSync(join(tmpdir(), "driver-template-conformance-"));
afterAll(() => rmSync(rootDir, { recursive: true, force: true }));

// Every catalog case, through the real registry and host: all must pass.
defineManagedRuntimeConformanceSuite({
  name: "driver-template",
  driver: createManagedRuntimeProviderDriver,
  factoryOptions: { rootDir },
});
