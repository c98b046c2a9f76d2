// Runs in Workers and Node: no Node builtin is imported from this entry.
export * from "./abort-reason.js";
export * from "./abortable-sleep.js";
export * from "./has-methods.js";
export * from "./race-abort.js";
export * from "./read-bounded-bytes.js";
export * from "./schemas.js";
export * from "./sha256-hex.js";
export * from "./stable-json.js";
export * from "./with-deadline.js";
// The contract holds these (it needs them itself); they are re-exported so one import finds every helper.
export {
  type JitteredBackoffInput,
  concatBytes,
  jitteredBackoffMs,
  shellQuote,
} from "@open-managed-agents/runtime-resource-contract";
