import Anthropic from "@anthropic-ai/sdk";
import { decodeWorkSecret } from "../../src/index.js";
import type { Stack } from "./stack.js";

/**
 * A client of the stack's control plane that records every secret the worker sees on the wire: the
 * environment key, each claimed item's work secret and the sessions token inside it.
 */
export function secretRecordingClient(stack: Stack): {
  readonly client: Anthropic;
  readonly secrets: Set<string>;
} {
  const secrets = new Set<string>([stack.environment.environmentKey]);
  const recordSecrets: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    if (
      String(input instanceof Request ? input.url : input).includes("/work/poll") &&
      response.ok
    ) {
      const text = await response.clone().text();
      const work =
        text.trim() === "" || text.trim() === "null"
          ? null
          : (JSON.parse(text) as { secret?: string | null });
      if (work?.secret) {
        secrets.add(work.secret);
        const { sessionsToken } = decodeWorkSecret(work.secret);
        if (sessionsToken) secrets.add(sessionsToken);
      }
    }
    return response;
  };
  const client = new Anthropic({
    baseURL: stack.plane.url,
    apiKey: null,
    authToken: null,
    maxRetries: 0,
    fetch: recordSecrets,
  });
  return { client, secrets };
}
