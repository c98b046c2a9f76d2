export /** Runs at most `limit` tasks at once; `run` waits for a free slot, the first failure surfaces. */
function createLimiter(limit: number) {
  const running = new Set<Promise<void>>();
  let failure: unknown = null;
  return {
    async run(task: () => Promise<void>): Promise<void> {
      if (failure) throw failure;
      while (running.size >= limit) await Promise.race(running);
      if (failure) throw failure;
      const promise = task().then(
        () => void running.delete(promise),
        (error: unknown) => {
          failure ??= error;
          running.delete(promise);
        },
      );
      running.add(promise);
    },
    async drain(): Promise<void> {
      await Promise.all(running);
      if (failure) throw failure;
    },
  };
}
