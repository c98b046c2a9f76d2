import { configure } from "safe-stable-stringify";

// Circular values throw, as `JSON.stringify` does, instead of becoming a "[Circular]" marker.
const deterministicStringify = configure({ deterministic: true, circularValue: TypeError });

/**
 * JSON with object keys sorted at every depth, so equal values always give equal text and equal
 * hashes. `undefined` members are dropped, as `JSON.stringify` does; a circular value throws a TypeError.
 */
export function stableJson(value: unknown): string {
  // Like `JSON.stringify`, a top-level `undefined` gives `undefined`; callers pass records.
  return deterministicStringify(value) as string;
}
