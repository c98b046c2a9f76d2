/** Inputs of {@link jitteredBackoffMs}. */
export interface JitteredBackoffInput {
  /** Retry number, 0 for the first retry; the delay doubles with each. */
  readonly attempt: number;
  /** Delay of the first retry before jitter, in ms. */
  readonly baseMs: number;
  /** Cap of the delay before jitter, in ms. */
  readonly maxMs: number;
  /** Fraction (0–1) of the delay removed at random: 1 is "full jitter", 0 none. */
  readonly jitter: number;
  /** Uniform random number in [0, 1). @default Math.random */
  readonly random?: () => number;
}

/**
 * Exponential backoff with jitter: `min(maxMs, baseMs · 2^attempt)`, less up to `jitter` of it at
 * random, in whole milliseconds. Every retry loop and retry schedule of the project uses this one rule,
 * so callers spread out the same way.
 */
export function jitteredBackoffMs(input: JitteredBackoffInput): number {
  const ceiling = Math.min(input.maxMs, input.baseMs * 2 ** Math.max(0, input.attempt));
  return Math.floor(ceiling * (1 - input.jitter * (input.random ?? Math.random)()));
}
