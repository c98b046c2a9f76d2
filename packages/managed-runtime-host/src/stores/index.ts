export { createMemoryFencePort, type MemoryFencePortOptions } from "./memory-fence-port.js";
export { createMemoryOrphanPort, type MemoryOrphanPortOptions } from "./memory-orphan-port.js";
export {
  createMemorySandboxJournal,
  type MemorySandboxJournalOptions,
} from "./memory-sandbox-journal.js";
export { MAX_FENCE_TTL_MS } from "./fence-inputs.js";
export { MAX_ORPHAN_ERROR_LENGTH, MAX_ORPHAN_LIST_LIMIT } from "./orphan-inputs.js";
export type { StoreClockOptions } from "./store-options.js";
