/** A map that forgets its oldest entries past `capacity`; results of idempotent calls live here. */
export interface BoundedCache<V> {
  get(key: string): V | undefined;
  set(key: string, value: V): void;
}

/** Creates a {@link BoundedCache}. */
export function createBoundedCache<V>(capacity: number): BoundedCache<V> {
  const entries = new Map<string, V>();
  return {
    get: (key) => entries.get(key),
    set(key, value) {
      entries.delete(key);
      entries.set(key, value);
      if (entries.size > capacity) entries.delete(entries.keys().next().value as string);
    },
  };
}
