/**
 * The bridge's `WarmPool` with its container ceiling held at the configured limit. Workers code only.
 *
 * Cloudflare's `WarmPool` (`@cloudflare/sandbox/bridge` 0.12.10) infers its ceiling from the first
 * "Maximum number of running container instances exceeded" it sees: the containers it has assigned at
 * that moment. Under a burst the starts run in parallel and none is assigned yet, so it records 0 (or a
 * few) and refuses every later request with "instance limit reached (0/0)"; only its warm-pool probe
 * (`WARM_POOL_TARGET` above 0) ever clears that, and the stored value even outlives a restart. When
 * `WARM_POOL_MAX_INSTANCES` is set, the ceiling here is that value and nothing inferred: the limit is used
 * in full, a request over it is refused with the bridge's own 503 `capacity_exceeded`, and new containers
 * start as soon as old ones end. Unset, the upstream inference is kept unchanged.
 */

/** The members of the upstream class this reads (private in its declarations, plain fields at run time). */
interface WarmPoolInternals {
  readonly config?: { readonly maxInstances?: number };
}

/** A Durable Object class: its constructor takes `(ctx, env)`; a mixin must accept any arguments. */
// biome-ignore lint/suspicious/noExplicitAny: TypeScript requires a mixin's base to take `...args: any[]`.
type DurableObjectClass = new (...args: any[]) => object;

/** Returns a subclass of the bridge's `WarmPool` class whose ceiling is `WARM_POOL_MAX_INSTANCES` when set. */
export function holdConfiguredInstanceLimit<T extends DurableObjectClass>(WarmPool: T) {
  return class ConfiguredLimitWarmPool extends WarmPool {
    // biome-ignore lint/suspicious/noExplicitAny: a mixin's constructor takes `...args: any[]`.
    constructor(...args: any[]) {
      super(...args);
      const pool = this as unknown as WarmPoolInternals;
      let inferred: unknown = null;
      // The upstream class field is an own data property; an accessor in its place sees every write (the
      // inference after a refused start, the probe that clears it, the value read back from storage).
      Object.defineProperty(this, "knownMaxInstances", {
        configurable: true,
        enumerable: true,
        get: () => {
          const configured = pool.config?.maxInstances ?? 0;
          return configured > 0 ? configured : inferred;
        },
        set: (value: unknown) => {
          inferred = value;
        },
      });
    }
  };
}
