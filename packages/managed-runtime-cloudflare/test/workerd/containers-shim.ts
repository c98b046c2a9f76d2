/**
 * `@cloudflare/containers` for the workerd tests: the local container runtime of
 * `@open-managed-agents/local-container` stands in for workerd's container. `ConfinedSandbox` gets it as
 * it is: its container has no network but a proxy into this Worker's outbound handlers. The other classes
 * get it on the host network (so their containers reach the local control plane), wrapped so that
 * outbound interception can still be exercised (see egress-relay.ts).
 */
import {
  Container as LocalContainer,
  createLocalContainerRuntime,
} from "@open-managed-agents/local-container/containers-shim";
import { withOutboundRelay } from "./egress-relay.js";

export * from "@open-managed-agents/local-container/containers-shim";

/** Binding naming the local container server; deliberately not the shim's own binding name. */
export const TEST_CONTAINER_URL_BINDING = "OMA_TEST_CONTAINER_URL";

/** The class whose container the local runtime confines with Worker-routed egress. */
const CONFINED_CLASS = "ConfinedSandbox";

type LocalArgs<Env> = ConstructorParameters<typeof LocalContainer<Env>>;

export class Container<Env = unknown> extends LocalContainer<Env> {
  constructor(...args: LocalArgs<Env>) {
    const ctx = args[0] as unknown as { id: { toString(): string }; container?: unknown };
    const env = args[1] as unknown as Record<string, unknown>;
    const serverUrl = env[TEST_CONTAINER_URL_BINDING];
    if (typeof serverUrl !== "string")
      throw new Error(`${TEST_CONTAINER_URL_BINDING} is not bound`);
    const controlToken = String(env.OMA_TEST_CONTAINER_TOKEN);
    const containerId = ctx.id.toString();
    const confined = new.target.name === CONFINED_CLASS;
    Object.defineProperty(ctx, "container", {
      value: confined
        ? createLocalContainerRuntime(serverUrl, containerId, { controlToken })
        : withOutboundRelay(
            createLocalContainerRuntime(serverUrl, containerId, {
              controlToken,
              outbound: "refuse",
            }),
            containerId,
            typeof env.OMA_TEST_RELAY_URL === "string" ? env.OMA_TEST_RELAY_URL : undefined,
          ),
      configurable: true,
      enumerable: true,
    });
    super(...args);
  }
}
