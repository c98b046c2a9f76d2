import type { BlobStore } from "@open-managed-agents/blob-store";
import { createLimiter } from "./limiter.js";

/** Store calls in flight while objects are checked. */
const PARALLEL_HEADS = 8;

/** Whether the store still holds every key named: a HEAD each, several at a time, stopping at the first miss. */
export async function allStored(store: BlobStore, keys: Iterable<string>): Promise<boolean> {
  const heads = createLimiter(PARALLEL_HEADS);
  let whole = true;
  for (const key of keys) {
    if (!whole) break;
    await heads.run(async () => {
      if ((await store.head(key)) === null) whole = false;
    });
  }
  await heads.drain();
  return whole;
}
