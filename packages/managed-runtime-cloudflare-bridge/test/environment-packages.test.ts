import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { createMemoryBlobStore } from "@open-managed-agents/blob-store";
import { buildWheel, packNpmTool } from "@open-managed-agents/environment-packages/testing";
import { type LocalBridge, startLocalBridge } from "@open-managed-agents/local-container";
import {
  type HostLogger,
  type ManagedRuntimeRunInput,
  createManagedRuntimeHost,
  createManagedRuntimeProviderRegistry,
  createMemoryFencePort,
  createMemoryOrphanPort,
} from "@open-managed-agents/managed-runtime-host";
import type { EnvironmentPackages } from "@open-managed-agents/runtime-resource-contract";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCloudflareBridgeManagedRuntime } from "../src/index.js";
import { scopeFor, shellProfile } from "./support.js";

// Cloudflare's bridge Worker in local workerd over the local container runtime: each container has its own
// /tmp, so a new container after a workspace restore finds the restored marker and no warm marker.
let bridge: LocalBridge;
let files: string;
let seedScript: string;
const store = createMemoryBlobStore();
const fences = createMemoryFencePort();
const modes: unknown[] = [];
const logger: HostLogger = {
  info: (event, fields) => void (event === "environment.packages" && modes.push(fields.mode)),
  warn: () => undefined,
  error: () => undefined,
};

beforeAll(async () => {
  bridge = await startLocalBridge();
  files = mkdtempSync(join(tmpdir(), "oma-bridge-env-packages-"));
  const wheel = buildWheel(files, "oma-demo-tool", "1.0.0", "oma-demo-py");
  const tarball = packNpmTool(files, "oma-demo-npm", "2.0.0", "oma-demo-js");
  // The package files travel in the workspace, as base64 in the first work item's script.
  const put = (file: string) =>
    `printf %s '${readFileSync(file).toString("base64")}' | base64 -d > /workspace/pkgs/${basename(file)}`;
  seedScript = `mkdir -p /workspace/pkgs && ${put(wheel)} && ${put(tarball)}`;
}, 120_000);

afterAll(async () => {
  await bridge?.stop();
  if (files) rmSync(files, { recursive: true, force: true });
});

// A system interpreter: the confined container sees the host's /usr (copy-on-write), not /root, where a
// version manager's interpreter may live.
const python = "/usr/bin/python3";

async function run(sessionId: string, script: string, environmentPackages?: EnvironmentPackages) {
  const driver = createCloudflareBridgeManagedRuntime({
    baseUrl: bridge.url,
    apiKey: bridge.apiKey,
    checkpointStore: store,
    outputStore: store,
    environmentPackages: { python, pip: { noIndex: true, findLinks: ["/workspace/pkgs"] } },
  });
  const scope = scopeFor(sessionId);
  const profile = shellProfile(script);
  const prepared = await createManagedRuntimeProviderRegistry({ drivers: [driver] }).prepare({
    provider: "cloudflare-bridge",
    placement: "driver_service",
    scope,
    profile,
    providerConfig: {},
  });
  const host = createManagedRuntimeHost({
    ownerId: "bridge-env",
    leaseTtlMs: 60_000,
    heartbeatIntervalMs: 20_000,
    fences,
    orphans: createMemoryOrphanPort(),
    ...prepared.resources,
    logger,
  });
  const input: ManagedRuntimeRunInput = {
    scope,
    profile,
    ...(environmentPackages ? { environmentPackages } : {}),
  };
  return host.run(input);
}

describe("environment packages on the cloudflare-bridge driver and the local stack", () => {
  it("installs into the workspace, and the next container re-runs only apt", async () => {
    const packages = {
      pip: ["oma-demo-tool==1.0.0"],
      npm: ["/workspace/pkgs/oma-demo-npm-2.0.0.tgz"],
    };
    expect(await run("session-env", seedScript)).toMatchObject({ type: "completed" });
    // The harness uses both tools, then removes the tarball: a reinstall in the next container would fail.
    const second = await run(
      "session-env",
      "oma-demo-py && oma-demo-js && rm /workspace/pkgs/oma-demo-npm-2.0.0.tgz",
      packages,
    );
    expect(second, JSON.stringify(second)).toMatchObject({ type: "completed" });
    const third = await run(
      "session-env",
      'test "$(oma-demo-py)" = "oma-demo-tool 1.0.0" && test "$(oma-demo-js)" = "oma-demo-npm 2.0.0"',
      packages,
    );
    expect(third, JSON.stringify(third)).toMatchObject({ type: "completed" });
    expect(modes).toEqual(["full", "restored"]);
  }, 300_000);
});
