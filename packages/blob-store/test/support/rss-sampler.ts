/** Samples this process's resident set size until stopped and reports the peak growth. */
export function startRssSampler(intervalMs = 10): {
  sample(): void;
  stop(): { baselineBytes: number; peakGrowthBytes: number };
} {
  const baselineBytes = process.memoryUsage.rss();
  let peakBytes = baselineBytes;
  const sample = (): void => {
    peakBytes = Math.max(peakBytes, process.memoryUsage.rss());
  };
  const timer = setInterval(sample, intervalMs);
  return {
    sample,
    stop() {
      clearInterval(timer);
      sample();
      return { baselineBytes, peakGrowthBytes: peakBytes - baselineBytes };
    },
  };
}
