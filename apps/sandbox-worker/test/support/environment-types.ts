/** What the workerd tests learn about the self-hosted environment the global setup started. */
export interface TestEnvironment {
  /** The local control plane: the Worker's `MANAGED_AGENTS_BASE_URL`. */
  readonly planeUrl: string;
  readonly adminToken: string;
  readonly environmentId: string;
  readonly environmentKey: string;
  readonly webhookSecret: string;
  /** Serves the control plane's signed webhook deliveries: `GET /deliveries`. */
  readonly relayUrl: string;
}

/** A webhook exactly as the control plane signed and sent it. */
export interface RecordedWebhook {
  readonly headers: Record<string, string>;
  readonly body: string;
}
