/**
 * A bridge Worker that dies and comes back (crash, redeploy) while its containers keep running, as on
 * Cloudflare. The bridge must still reach those containers: a DELETE after the restart stops them.
 */
import { startLocalBridge } from "@open-managed-agents/local-container";
import { describe, expect, it } from "vitest";
import { bridgeClient, decodeOutput } from "./bridge-client.js";

// The bridge's warm pool checks container health every 10 s; waiting past one check is what lost the mapping.
const POOL_HEALTH_CHECK_MS = 12_000;

describe("bridge Worker restart", () => {
  it("keeps the sandbox id mapped to its running container, so a DELETE after the restart stops it", async () => {
    const bridge = await startLocalBridge();
    try {
      const client = bridgeClient(bridge.url, bridge.apiKey);
      const id = await client.create();
      await client.exec(id, ["sh", "-c", "echo before > /workspace/marker"]);
      const [container] = bridge.containerServer.containers.list().map((entry) => entry.id);
      expect(container).toBeDefined();

      await bridge.restartWorker();
      await new Promise((resolve) => setTimeout(resolve, POOL_HEALTH_CHECK_MS));
      const { frames } = await client.exec(id, ["cat", "/workspace/marker"]);
      expect(decodeOutput(frames, "stdout")).toBe("before\n");
      expect(bridge.containerServer.containers.list().map((entry) => entry.id)).toEqual([
        container,
      ]);

      const deleted = await client.request("DELETE", `/v1/sandbox/${id}`);
      expect(deleted.status).toBe(204);
      expect(bridge.containerServer.containers.list()).toEqual([]);
    } finally {
      await bridge.stop();
    }
  }, 90_000);
});
