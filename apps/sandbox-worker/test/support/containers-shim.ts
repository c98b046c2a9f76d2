/**
 * `@cloudflare/containers` for the workerd tests: the local container runtime of
 * `@open-managed-agents/local-container` stands in for workerd's container (the real `Container` class
 * and the real `Sandbox` Durable Object run unchanged over it), with the image's backup tooling
 * emulated (see backup-tooling.ts), connections dropped the moment a container is destroyed, as on
 * Cloudflare (see dropped-connections.ts), and destroys that tests arm to fail (see destroy-faults.ts).
 * The server URL comes from the `OMA_TEST_CONTAINER_URL` binding.
 */
import {
  Container as LocalContainer,
  createLocalContainerRuntime,
} from "@open-managed-agents/local-container/containers-shim";
import { withBackupTooling } from "./backup-tooling.js";
import { withDestroyFaults } from "./destroy-faults.js";
import { withConnectionsDroppedOnDestroy } from "./dropped-connections.js";

export * from "@open-managed-agents/local-container/containers-shim";

/** Binding naming the local container server (the test's own, so the plain shim does not install itself). */
export const TEST_CONTAINER_URL_BINDING = "OMA_TEST_CONTAINER_URL";

type LocalArgs<Env> = ConstructorParameters<typeof LocalContainer<Env>>;

export class Container<Env = unknown> extends LocalContainer<Env> {
  constructor(...args: LocalArgs<Env>) {
    const ctx = args[0] as unknown as { id: { toString(): string } };
    const serverUrl = (args[1] as unknown as Record<string, unknown>)[TEST_CONTAINER_URL_BINDING];
    if (typeof serverUrl !== "string")
      throw new Error(`${TEST_CONTAINER_URL_BINDING} is not bound`);
    const controlToken = String(
      (args[1] as unknown as Record<string, unknown>).OMA_TEST_CONTAINER_TOKEN,
    );
    Object.defineProperty(ctx, "container", {
      value: withDestroyFaults(
        withBackupTooling(
          withConnectionsDroppedOnDestroy(
            createLocalContainerRuntime(serverUrl, ctx.id.toString(), { controlToken }),
          ),
        ),
        ctx.id.toString(),
      ),
      configurable: true,
      enumerable: true,
    });
    super(...args);
  }
}
