import Anthropic from "@anthropic-ai/sdk";
import { betaAgentToolset20260401 } from "@anthropic-ai/sdk/tools/agent-toolset/node";
import { readAmaWorkerConfig } from "./config.js";
import { takeCredentialsFile } from "./credentials-file.js";
import { LEASE_HANDOVER_ENV, leaseHandoverFetch } from "./lease-handover.js";
import { proxyFetchFor } from "./proxy-fetch.js";

/** Options of {@link runAmaWorkerItem}. */
export interface RunAmaWorkerItemOptions {
  /**
   * @default process.env. When it names a credentials file (`OMA_CREDENTIALS_FILE`), the file is read and
   * deleted before anything else runs, and its values count as variables of this object (in memory only).
   */
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly signal?: AbortSignal;
}

/**
 * Services the one work item the `ANTHROPIC_*` variables (and the credentials file) name with the SDK's
 * `EnvironmentWorker.handleItem()` and the standard `agent_toolset_20260401` (bash, read, write, edit,
 * glob, grep) confined to the workdir. The SDK heartbeats the item's lease and force-stops it on exit; a lease
 * the environment worker handed over (`OMA_WORK_LAST_HEARTBEAT`) is continued from its last heartbeat.
 */
export async function runAmaWorkerItem(options: RunAmaWorkerItemOptions = {}): Promise<void> {
  const given = options.env ?? process.env;
  const env = { ...given, ...takeCredentialsFile(given) };
  const config = readAmaWorkerConfig(env);
  // apiKey null: an ANTHROPIC_API_KEY that leaked into the sandbox is never sent.
  const viaProxy = proxyFetchFor(config.baseURL, env);
  const handedOver = env[LEASE_HANDOVER_ENV];
  const client = new Anthropic({
    baseURL: config.baseURL,
    apiKey: null,
    authToken: config.authToken,
    ...(viaProxy || handedOver
      ? {
          fetch: leaseHandoverFetch(
            viaProxy ?? globalThis.fetch,
            env.ANTHROPIC_WORK_ID as string,
            handedOver,
          ),
        }
      : {}),
  });
  const worker = client.beta.environments.work.worker({
    workdir: config.workdir,
    tools: (context) => betaAgentToolset20260401(context),
    ...(config.maxIdleMs === undefined ? {} : { maxIdleMs: config.maxIdleMs }),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  await worker.handleItem({
    workId: env.ANTHROPIC_WORK_ID,
    environmentId: env.ANTHROPIC_ENVIRONMENT_ID,
    sessionId: env.ANTHROPIC_SESSION_ID,
    ...(env.ANTHROPIC_WORK_SECRET ? { workSecret: env.ANTHROPIC_WORK_SECRET } : {}),
    ...(env.ANTHROPIC_ENVIRONMENT_KEY ? { environmentKey: env.ANTHROPIC_ENVIRONMENT_KEY } : {}),
  });
}
