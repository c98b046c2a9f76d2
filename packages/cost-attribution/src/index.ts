export type {
  CostAttributionCapabilities,
  CostAttributionPort,
  CostReport,
  CostReportQuery,
  FocusCostRow,
  UsageLedgerReader,
  UsageLedgerTotal,
} from "./ports.js";
export { type CostAttributionRegistry, createCostAttributionRegistry } from "./registry.js";
export { MAX_REPORT_DAYS } from "./query.js";
export { type MemoryUsageLedger, createMemoryUsageLedger } from "./memory-ledger.js";
