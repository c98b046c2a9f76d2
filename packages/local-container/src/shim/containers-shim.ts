/**
 * Drop-in replacement for `@cloudflare/containers` 0.3.7 in local workerd without Docker. Everything is
 * re-exported from the real package; only `Container` differs: before the real constructor runs, it
 * gives `ctx.container` a runtime object that drives a local container server (the URL comes from the
 * `OMA_LOCAL_CONTAINER_URL` binding). The real Container state machine and the Sandbox SDK run unchanged.
 *
 * Bundle a Worker with `@cloudflare/containers` aliased to this module. Workers code only: no Node APIs.
 */
import { Container as UpstreamContainer } from "@cloudflare/containers";
import { createLocalContainerRuntime } from "./local-runtime.js";

export * from "@cloudflare/containers";
export { CONTAINER_ID_HEADER, CONTROL_PORT, CONTROL_TOKEN_HEADER } from "../protocol.js";
export { holdConfiguredInstanceLimit } from "./warm-pool-limit.js";
export {
  type AdoptingContainerRuntime,
  type LocalContainerRuntime,
  type LocalContainerRuntimeOptions,
  createLocalContainerRuntime,
} from "./local-runtime.js";

/** Name of the binding that carries the local container server's base URL. */
export const LOCAL_CONTAINER_URL_BINDING = "OMA_LOCAL_CONTAINER_URL";
/** Name of the binding that carries the local container server's control token (`server.controlToken`). */
export const LOCAL_CONTAINER_TOKEN_BINDING = "OMA_LOCAL_CONTAINER_TOKEN";

interface DurableObjectStateLike {
  readonly id: { toString(): string };
  readonly container?: unknown;
  blockConcurrencyWhile?(callback: () => Promise<unknown>): Promise<unknown>;
}

function installLocalRuntime(ctx: DurableObjectStateLike, env: unknown): void {
  const serverUrl = (env as Record<string, unknown> | null | undefined)?.[
    LOCAL_CONTAINER_URL_BINDING
  ];
  if (serverUrl === undefined && ctx.container !== undefined) return;
  if (typeof serverUrl !== "string" || !/^https?:\/\/[^/]+/.test(serverUrl)) {
    throw new Error(
      `${LOCAL_CONTAINER_URL_BINDING} must be set to the local container server's http URL (e.g. http://127.0.0.1:41234)`,
    );
  }
  const controlToken = (env as Record<string, unknown>)[LOCAL_CONTAINER_TOKEN_BINDING];
  const runtime = createLocalContainerRuntime(
    serverUrl,
    ctx.id.toString(),
    typeof controlToken === "string" ? { controlToken } : {},
  );
  Object.defineProperty(ctx, "container", { value: runtime, configurable: true, enumerable: true });
  // After a workerd restart a container may still run on the server. Without adopting it, `running` reads
  // false, the Container alarm marks it stopped, the bridge's pool drops the id mapping, and a later
  // DELETE answers 204 while the container keeps running.
  void ctx.blockConcurrencyWhile?.(() => runtime.adopt());
}

type UpstreamArgs<Env> = ConstructorParameters<typeof UpstreamContainer<Env>>;

/** `Container` of `@cloudflare/containers`, backed by a local container server. */
export class Container<Env = unknown> extends UpstreamContainer<Env> {
  constructor(...args: UpstreamArgs<Env>) {
    installLocalRuntime(args[0] as unknown as DurableObjectStateLike, args[1]);
    super(...args);
  }
}
