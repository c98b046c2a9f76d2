import Anthropic from "@anthropic-ai/sdk";
import type { EnvironmentSettings } from "./settings.js";

/**
 * The official SDK client the Worker and its Durable Objects use. It carries no credential of its own:
 * the poller adds the environment key, the environment worker each item's sessions token.
 */
export function createManagedAgentsClient(settings: EnvironmentSettings): Anthropic {
  return new Anthropic({ baseURL: settings.baseUrl, apiKey: null, authToken: null, webhookKey: settings.webhookSecret, maxRetries: 2 });
}
