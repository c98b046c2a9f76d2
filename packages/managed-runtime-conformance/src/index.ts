export {
  SANDBOX_PORT_FACTS,
  type SandboxPortFact,
  type ConformanceLifecycle,
  type ConformanceDurability,
  type ManagedRuntimeProviderConformance,
  managedRuntimeProviderConformanceSchema,
  sandboxPortFactsSchema,
} from "./catalog/conformance-row.js";
export {
  type ConformanceRowProvenance,
  conformanceRowProvenanceSchema,
  describeRowProvenance,
} from "./catalog/row-provenance.js";
export { formatConformanceCatalog } from "./catalog/catalog-listing.js";
export {
  MANAGED_RUNTIME_PROVIDER_CONFORMANCE,
  MANAGED_RUNTIME_PROVIDER_IDS,
  type ConformanceCatalog,
  type ManagedRuntimeProviderId,
  createConformanceCatalog,
  getManagedRuntimeProviderConformance,
  isManagedRuntimeProviderId,
  requireManagedRuntimeProvider,
} from "./catalog/provider-conformance.js";
export {
  type DeriveConformanceRowInput,
  deriveConformanceRow,
  diffConformanceRows,
} from "./catalog/derive-conformance-row.js";
export {
  CONFORMANCE_CASES,
  CONFORMANCE_CASE_IDS,
  type ConformanceCase,
  type ConformanceCaseId,
  type ConformanceGroup,
  type ConformanceTier,
} from "./cases/case-catalog.js";
export { ConformanceFailure } from "./cases/assertions.js";
export { SCRIPTS as CONFORMANCE_SCRIPTS } from "./cases/harness-scripts.js";
export { type ConformanceSubject, loadConformanceSubject } from "./cases/subject.js";
export {
  type ConformanceCaseResult,
  type ConformanceReport,
  type ConformanceRunLimits,
  executeConformanceCase,
  runConformanceCase,
  runManagedRuntimeConformance,
} from "./runner/run-conformance.js";
export { formatConformanceReport } from "./runner/report-format.js";
export {
  type LeftoverRuntimes,
  type StartedRuntimes,
  trackStartedRuntimes,
} from "./runner/started-runtimes.js";
export {
  type ConformanceDriverModule,
  type ConformanceHarnessOptions,
  type ConformanceTimeouts,
  type ManagedRuntimeConformanceOptions,
  type ResolvedConformanceOptions,
  resolveConformanceOptions,
} from "./runner/suite-options.js";
