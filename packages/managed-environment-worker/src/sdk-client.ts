import type { ClientOptions } from "@anthropic-ai/sdk";
import type { Work } from "@anthropic-ai/sdk/resources/beta/environments/work";
import type { Files } from "@anthropic-ai/sdk/resources/beta/files";
import type { Sessions } from "@anthropic-ai/sdk/resources/beta/sessions/sessions";
import type { Webhooks } from "@anthropic-ai/sdk/resources/beta/webhooks";

/**
 * The part of the official SDK client this worker calls. An `Anthropic` client satisfies it; so does a
 * `BaseAnthropic` subclass that carries only these resources, which keeps a Worker's bundle free of the rest.
 */
export interface ManagedAgentsClient {
  readonly baseURL: string;
  readonly webhookKey: string | null;
  /** A copy with other options (a per-credential client, a routed logger). */
  withOptions(options: Partial<ClientOptions>): ManagedAgentsClient;
  readonly beta: {
    readonly environments: { readonly work: Work };
    readonly sessions: Pick<Sessions, "retrieve">;
    readonly files: Pick<Files, "download">;
    readonly webhooks: Pick<Webhooks, "unwrap">;
  };
}
