import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { getSandbox } from "@cloudflare/sandbox";
import type {
  ManagedRuntimeProfile,
  RuntimeEnvironment,
  RuntimeResourceScope,
} from "@open-managed-agents/runtime-resource-contract";
import { afterEach, expect } from "vitest";
import { type CloudflareSandbox, newRuntimeId } from "../../src/index.js";
import { type CloudflareSandboxStub, createCloudflareSdkSandbox } from "../../src/sdk.js";
import { sendFromContainer } from "./egress-relay.js";
import type { TestEnv } from "./worker.js";
import { CONTROL_TOKEN_HEADER } from "@open-managed-agents/local-container/containers-shim";

export const testEnv = env as unknown as TestEnv;

/** The image the test container class stands for; the local container server runs it as host processes. */
export const TEST_RUNTIME_ENVIRONMENT: RuntimeEnvironment = {
  kind: "base",
  artifact: { type: "image", reference: "docker.io/cloudflare/sandbox:0.12.10" },
};

/** A profile that requires credential egress; the process does nothing, so tests drive the container themselves. */
export const CREDENTIAL_EGRESS_PROFILE: ManagedRuntimeProfile = {
  workspace: { requirement: "durable" },
  outputs: { requirement: "durable" },
  runtimeCheckpoint: "disabled",
  credentialEgress: { requirement: "required" },
  driver: { type: "ama_worker", process: { command: "sh", args: ["-c", "true"] } },
};

/** A fresh scope: its own session and work item. */
export function newScope(): RuntimeResourceScope {
  return {
    workspaceId: "ws",
    environmentId: "env",
    sessionId: `s-${crypto.randomUUID()}`,
    workId: `w-${crypto.randomUUID()}`,
  };
}

/** The real SDK stub of a runtime id, typed as the adapter's structural stub (assignability is checked here). */
export function sdkStub(
  runtimeId: string,
  namespace: "SANDBOX" | "PLAIN_SANDBOX" = "SANDBOX",
): CloudflareSandboxStub {
  const stub =
    namespace === "SANDBOX"
      ? getSandbox(testEnv.SANDBOX, runtimeId)
      : getSandbox(testEnv.PLAIN_SANDBOX, runtimeId);
  const structural: CloudflareSandboxStub = stub;
  return structural;
}

/** Runtime ids {@link createSandbox} opened since the last {@link expectNoContainerOutlivesItsRun} check. */
let openedRuntimeIds = new Set<string>();

/** The application's `createSandbox`, as the README shows it (the tests also note the runtime id). */
export function createSandbox(_env: TestEnv, runtimeId: string): CloudflareSandbox {
  openedRuntimeIds.add(runtimeId);
  return createCloudflareSdkSandbox(getSandbox(testEnv.SANDBOX, runtimeId));
}

/** Ids of the containers alive on the local container server (each a `Sandbox` Durable Object id). */
export async function liveContainers(): Promise<string[]> {
  const response = await fetch(`${testEnv.OMA_TEST_CONTAINER_URL}/__oma/containers/`, {
    headers: { [CONTROL_TOKEN_HEADER]: `Bearer ${testEnv.OMA_TEST_CONTAINER_TOKEN}` },
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { containers: string[] }).containers;
}

/** The ids among `runtimeIds` whose container is alive now. */
export async function aliveRuntimes(runtimeIds: Iterable<string>): Promise<string[]> {
  const live = new Set(await liveContainers());
  return [...runtimeIds].filter((runtimeId) => live.has(containerIdOf(runtimeId)));
}

/**
 * Registers an `afterEach` of the calling file: once a test's runs ended, no container of a runtime that
 * {@link createSandbox} opened during it is alive. It waits up to 30 s and fails naming the runtimes left.
 */
export function expectNoContainerOutlivesItsRun(): void {
  afterEach(async () => {
    const runtimeIds = openedRuntimeIds;
    openedRuntimeIds = new Set();
    await expect
      .poll(() => aliveRuntimes(runtimeIds), { timeout: 30_000, interval: 250 })
      .toEqual([]);
  }, 45_000);
}

/** A fresh sandbox over the real Durable Object. */
export function freshSandbox(namespace: "SANDBOX" | "PLAIN_SANDBOX" = "SANDBOX"): {
  readonly runtimeId: string;
  readonly sandbox: CloudflareSandbox;
  readonly stub: CloudflareSandboxStub;
} {
  const runtimeId = newRuntimeId();
  const stub = sdkStub(runtimeId, namespace);
  return { runtimeId, stub, sandbox: createCloudflareSdkSandbox(stub) };
}

/** The Durable Object id string of a runtime: the container id the local container server sees. */
export function containerIdOf(runtimeId: string): string {
  return testEnv.SANDBOX.idFromName(runtimeId).toString();
}

/** Collects a byte stream as text. */
export async function readText(stream: ReadableStream<Uint8Array>): Promise<string> {
  return new Response(stream).text();
}

/** What came back to the container for a request it sent. */
export interface ContainerResponse {
  readonly status: number;
  readonly egress: string | null;
  readonly body: string;
}

/**
 * Sends a request as the runtime's container would: inside its Durable Object (the fetcher workerd would
 * use belongs to that object's I/O context), through the interception the `Container` class registered.
 */
export async function requestFromContainer(
  runtimeId: string,
  url: string,
  init: RequestInit = {},
): Promise<ContainerResponse> {
  const stub = testEnv.SANDBOX.get(testEnv.SANDBOX.idFromName(runtimeId));
  return runInDurableObject(stub, async () => {
    const response = await sendFromContainer(containerIdOf(runtimeId), new Request(url, init));
    return {
      status: response.status,
      egress: response.headers.get("x-oma-egress"),
      body: await response.text(),
    };
  });
}
