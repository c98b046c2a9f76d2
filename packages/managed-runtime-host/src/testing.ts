/**
 * Test helpers for the managed-runtime seam: in-memory stores, instrumented in-memory port fakes with
 * injectable failures and hangs, a recording logger and a manual-time driver. Import from
 * `@open-managed-agents/managed-runtime-host/testing`.
 */
export {
  createMemoryFencePort,
  createMemoryOrphanPort,
  createMemorySandboxJournal,
  type MemoryFencePortOptions,
  type MemoryOrphanPortOptions,
  type MemorySandboxJournalOptions,
} from "./stores/index.js";
export { createManualTime, type ManualTime } from "./time.js";
export { type CallJournal, type CallRecord, createCallJournal } from "./testing/journal.js";
export {
  type FaultKind,
  type FaultPlan,
  type FaultRule,
  createFaultPlan,
  injectedError,
} from "./testing/faults.js";
export { type InstrumentOptions, instrumentPort } from "./testing/instrument.js";
export {
  FAKE_SANDBOX_CAPABILITIES,
  type FakeRuntime,
  type FakeSandbox,
  type FakeSandboxOptions,
  createFakeSandbox,
} from "./testing/fake-sandbox.js";
export {
  type FakeOutputPortOptions,
  createFakeOutputPort,
  createFakeWorkspacePort,
} from "./testing/fake-storage-ports.js";
export {
  FAKE_EGRESS_CAPABILITIES,
  createFakeCredentialEgressPort,
  createFakeRuntimeCheckpointPort,
  createFakeSessionInputPort,
} from "./testing/fake-optional-ports.js";
export {
  type ScriptedHarnessOptions,
  createScriptedHarnessDriver,
} from "./testing/fake-harness.js";
export {
  type FakeHostDependencies,
  type FakeManagedRuntime,
  type FakeManagedRuntimeOptions,
  type FakeProviderDriverOptions,
  createFakeHostDependencies,
  createFakeManagedRuntime,
  createFakeProviderDriver,
} from "./testing/fake-runtime.js";
export {
  type LogEntry,
  type RecordingLogger,
  createRecordingLogger,
} from "./testing/recording-logger.js";
export { type SettleOptions, settleWithManualTime } from "./testing/manual-drive.js";
