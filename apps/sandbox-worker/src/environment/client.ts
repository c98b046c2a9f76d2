import { BaseAnthropic } from "@anthropic-ai/sdk/client";
import { Work } from "@anthropic-ai/sdk/resources/beta/environments/work";
import { Files } from "@anthropic-ai/sdk/resources/beta/files";
import { Sessions } from "@anthropic-ai/sdk/resources/beta/sessions/sessions";
import { Webhooks } from "@anthropic-ai/sdk/resources/beta/webhooks";
import type { ManagedAgentsClient } from "@open-managed-agents/managed-environment-worker";
import type { EnvironmentSettings } from "../config.js";

/**
 * The official SDK client with only the resources the Worker calls. `Anthropic` itself builds every
 * resource of the API, which would put the whole SDK (tool runners, message streams) in the bundle.
 */
class WorkerClient extends BaseAnthropic implements ManagedAgentsClient {
  readonly beta = {
    environments: { work: new Work(this) },
    sessions: new Sessions(this),
    files: new Files(this),
    webhooks: new Webhooks(this),
  };
}

/**
 * The official SDK client the Worker and its Durable Objects use. It carries no credential of its own:
 * the poller adds the environment key, the environment worker each item's sessions token.
 */
export function createManagedAgentsClient(settings: EnvironmentSettings): ManagedAgentsClient {
  return new WorkerClient({
    baseURL: settings.baseUrl,
    apiKey: null,
    authToken: null,
    webhookKey: settings.webhookSecret,
    maxRetries: 2,
  });
}
