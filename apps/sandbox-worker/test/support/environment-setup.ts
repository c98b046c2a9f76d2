import { randomBytes } from "node:crypto";
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { delimiter, dirname } from "node:path";
import { installAmaWorkerBin } from "@open-managed-agents/ama-worker";
import {
  type LocalControlPlane,
  startLocalControlPlane,
} from "@open-managed-agents/local-control-plane";
import type { RecordedWebhook, TestEnvironment } from "./environment-types.js";

export type { TestEnvironment } from "./environment-types.js";

/**
 * Starts, in Node, the local control plane (the stand-in for Managed Agents that the SDK inside
 * the Worker talks to over loopback) and installs `oma-ama-worker` where the confined local container
 * runtime finds it, on the PATH that runtime gives its processes (as the image puts it on its PATH).
 * The platform would POST each signed webhook to the deployed Worker; workerd's test Worker has no
 * address, so deliveries are recorded byte for byte and the tests hand them to the Worker unchanged.
 */
export async function startTestEnvironment(): Promise<{
  environment: TestEnvironment;
  close(): Promise<void>;
}> {
  const binDirectory = dirname(await installAmaWorkerBin(process.env.OMA_AMA_WORKER_BIN_DIR));
  process.env.PATH = `${binDirectory}${delimiter}${process.env.PATH ?? ""}`;
  const recorded: RecordedWebhook[] = [];
  const record: typeof fetch = async (_input, init) => {
    recorded.push({
      headers: Object.fromEntries(new Headers(init?.headers).entries()),
      body: String(init?.body ?? ""),
    });
    return new Response(null, { status: 204 });
  };
  const webhookSecret = `whsec_${randomBytes(24).toString("base64")}`;
  const plane: LocalControlPlane = await startLocalControlPlane({
    webhook: { url: "https://sandbox-worker.test/v1/environment/webhook", secret: webhookSecret },
    fetch: record,
  });
  const { id, environmentKey } = plane.createEnvironment({ name: "sandbox-worker-test" });
  const relay: Server = createServer((request, response) => {
    response.setHeader("content-type", "application/json");
    response.end(request.url === "/deliveries" ? JSON.stringify(recorded) : "[]");
  });
  await new Promise<void>((resolve) => relay.listen(0, "127.0.0.1", resolve));
  const { port } = relay.address() as AddressInfo;
  return {
    environment: {
      planeUrl: plane.url,
      adminToken: plane.adminToken,
      environmentId: id,
      environmentKey,
      webhookSecret,
      relayUrl: `http://127.0.0.1:${port}`,
    },
    async close() {
      await new Promise<void>((resolve) => relay.close(() => resolve()));
      await plane.stop();
    },
  };
}
