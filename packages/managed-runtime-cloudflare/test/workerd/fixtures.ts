import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { getSandbox } from "@cloudflare/sandbox";
import type { RuntimeEnvironment } from "@open-managed-agents/runtime-resource-contract";
import { type CloudflareSandbox, newRuntimeId } from "../../src/index.js";
import { type CloudflareSandboxStub, createCloudflareSdkSandbox } from "../../src/sdk.js";
import { sendFromContainer } from "./egress-relay.js";
import type { TestEnv } from "./worker.js";

export const testEnv = env as unknown as TestEnv;

/** The image the test container class stands for; the local container server runs it as host processes. */
export const TEST_RUNTIME_ENVIRONMENT: RuntimeEnvironment = { kind: "base", artifact: { type: "image", reference: "docker.io/cloudflare/sandbox:0.12.10" } };

/** The real SDK stub of a runtime id, typed as the adapter's structural stub (assignability is checked here). */
export function sdkStub(runtimeId: string, namespace: "SANDBOX" | "PLAIN_SANDBOX" = "SANDBOX"): CloudflareSandboxStub {
  const stub = namespace === "SANDBOX" ? getSandbox(testEnv.SANDBOX, runtimeId) : getSandbox(testEnv.PLAIN_SANDBOX, runtimeId);
  const structural: CloudflareSandboxStub = stub;
  return structural;
}

/** The application's `createSandbox`, as the README shows it. */
export function createSandbox(_env: TestEnv, runtimeId: string): CloudflareSandbox {
  return createCloudflareSdkSandbox(getSandbox(testEnv.SANDBOX, runtimeId));
}

/** A fresh sandbox over the real Durable Object. */
export function freshSandbox(namespace: "SANDBOX" | "PLAIN_SANDBOX" = "SANDBOX"): { readonly runtimeId: string; readonly sandbox: CloudflareSandbox; readonly stub: CloudflareSandboxStub } {
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
export async function requestFromContainer(runtimeId: string, url: string, init: RequestInit = {}): Promise<ContainerResponse> {
  const stub = testEnv.SANDBOX.get(testEnv.SANDBOX.idFromName(runtimeId));
  return runInDurableObject(stub, async () => {
    const response = await sendFromContainer(containerIdOf(runtimeId), new Request(url, init));
    return { status: response.status, egress: response.headers.get("x-oma-egress"), body: await response.text() };
  });
}
