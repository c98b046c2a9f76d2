/** `bun` on the container's PATH, as in the sandbox image, through the real SDK in workerd. */
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOOLS_BIN, assertBunAvailable, findContainerBun } from "../src/server/image-env.js";
import { createLocalContainerServer } from "../src/server/server.js";
import { type SdkHarness, startSdkHarness } from "./sdk-harness.js";

// scripts/bootstrap.sh installs bun there; without it only the refusal below can be checked.
const installed =
  existsSync(join(TOOLS_BIN, "bun")) || findContainerBun(process.env.PATH) !== undefined;

let sdk: SdkHarness | undefined;
beforeAll(async () => {
  if (installed) sdk = await startSdkHarness("fidelity-worker.ts");
}, 60_000);
afterAll(() => sdk?.stop());

describe("bun in the container", () => {
  it.runIf(installed)(
    "runs `bun` from the container's PATH",
    async () => {
      const body = await (sdk as SdkHarness).run("bun");
      expect(body.exitCode).toBe(0);
      expect(String(body.version)).toMatch(/^\d+\.\d+\.\d+$/);
      expect(body.run).toBe("2");
    },
    90_000,
  );

  it("refuses with capability_unsupported naming what to install when bun is required and absent", async () => {
    let failure: unknown;
    try {
      assertBunAvailable("/nonexistent-bin", "/nonexistent-tools/bin");
    } catch (error) {
      failure = error;
    }
    expect(ManagedRuntimeError.hasCode(failure, "capability_unsupported")).toBe(true);
    expect(String((failure as Error).message)).toContain(
      "npm install --prefix /nonexistent-tools bun@1.3.14",
    );
  });

  it.runIf(installed)("starts a server with requireBun when bun is installed", async () => {
    const rootDir = await mkdtemp(join(tmpdir(), "oma-bun-"));
    const server = await createLocalContainerServer({ rootDir, requireBun: true });
    await server.close();
    await rm(rootDir, { recursive: true, force: true });
  });
});
