import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import type { BetaSelfHostedWork } from "@anthropic-ai/sdk/resources/beta/environments/work";

/** The official client pointed at the local control plane, with no credential of its own. */
export function sdkClient(baseURL: string, authToken: string | null = null): Anthropic {
  return new Anthropic({ baseURL, apiKey: null, authToken, logLevel: "off", maxRetries: 0 });
}

/** Claims one item with the SDK's WorkPoller (claim + ack), without auto-stop. */
export async function claimOne(
  client: Anthropic,
  environmentId: string,
  environmentKey: string,
  extra: { reclaimOlderThanMs?: number } = {},
): Promise<BetaSelfHostedWork> {
  const poller = client.beta.environments.work.poller({
    environmentId,
    environmentKey,
    autoStop: false,
    ...extra,
  });
  for await (const work of poller) {
    poller.abort();
    return work;
  }
  throw new Error("poller ended without an item");
}

/** A temporary directory removed by the returned function. */
export async function tempDir(): Promise<{ path: string; remove: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), "oma-lcp-"));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}
