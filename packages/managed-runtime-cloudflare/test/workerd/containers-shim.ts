/**
 * `@cloudflare/containers` for the workerd tests: the local container runtime of
 * `@open-managed-agents/local-container` stands in for workerd's container, wrapped so that outbound
 * interception can be exercised (see egress-relay.ts).
 */
import { Container as LocalContainer, createLocalContainerRuntime } from "@open-managed-agents/local-container/containers-shim";
import { withOutboundRelay } from "./egress-relay.js";

export * from "@open-managed-agents/local-container/containers-shim";

/** Binding naming the local container server; deliberately not the shim's own binding name. */
export const TEST_CONTAINER_URL_BINDING = "OMA_TEST_CONTAINER_URL";

type LocalArgs<Env> = ConstructorParameters<typeof LocalContainer<Env>>;

export class Container<Env = unknown> extends LocalContainer<Env> {
  constructor(...args: LocalArgs<Env>) {
    const ctx = args[0] as unknown as { id: { toString(): string }; container?: unknown };
    const env = args[1] as unknown as Record<string, unknown>;
    const serverUrl = env[TEST_CONTAINER_URL_BINDING];
    if (typeof serverUrl !== "string") throw new Error(`${TEST_CONTAINER_URL_BINDING} is not bound`);
    const containerId = ctx.id.toString();
    Object.defineProperty(ctx, "container", {
      value: withOutboundRelay(createLocalContainerRuntime(serverUrl, containerId), containerId, typeof env.OMA_TEST_RELAY_URL === "string" ? env.OMA_TEST_RELAY_URL : undefined),
      configurable: true,
      enumerable: true,
    });
    super(...args);
  }
}
