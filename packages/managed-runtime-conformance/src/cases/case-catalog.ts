/** Where a case sits in the acceptance checklist. */
export type ConformanceGroup =
  | "catalog"
  | "admission"
  | "lifecycle"
  | "processes"
  | "persistence"
  | "credentials"
  | "readiness";

/**
 * `core`: every driver must pass it. `capability`: the case verifies the behaviour when the descriptor
 * claims the capability, and otherwise asserts the typed fail-closed error; it is never skipped.
 */
export type ConformanceTier = "core" | "capability";

/** One conformance case, as data: the vitest suite, the CLI and reports all read this one list. */
export interface ConformanceCase {
  readonly id: string;
  readonly title: string;
  readonly group: ConformanceGroup;
  /** The capability the case is about, as reported in the `capability` column. */
  readonly capability: string;
  readonly tier: ConformanceTier;
}

const conformanceCase = <const T extends ConformanceCase>(value: T): T => value;

/** Every conformance case, in the order they run. */
export const CONFORMANCE_CASES = [
  conformanceCase({
    id: "catalog.row",
    title: "the derived conformance row equals the catalog row",
    group: "catalog",
    capability: "catalog row",
    tier: "capability",
  }),
  conformanceCase({
    id: "admission.descriptor",
    title: "the descriptor parses, names the provider and create() refuses unlisted placements",
    group: "admission",
    capability: "descriptor",
    tier: "core",
  }),
  conformanceCase({
    id: "admission.live-ports",
    title: "every advertised strategy and lane is admitted and matches the live ports",
    group: "admission",
    capability: "advertised capabilities",
    tier: "core",
  }),
  conformanceCase({
    id: "admission.drift",
    title: "an advertisement the live ports do not deliver is refused with a typed error",
    group: "admission",
    capability: "capability drift",
    tier: "core",
  }),
  conformanceCase({
    id: "admission.credential-egress",
    title: "required credential egress is admitted only with an enforced port",
    group: "admission",
    capability: "credentialEgress.enforced",
    tier: "capability",
  }),
  conformanceCase({
    id: "admission.runtime-checkpoint",
    title: "a required runtime checkpoint is admitted only with a runtime-checkpoint port",
    group: "admission",
    capability: "sandbox.runtimeCheckpoints",
    tier: "capability",
  }),
  conformanceCase({
    id: "admission.supervised-lane",
    title:
      "the supervised lane is admitted only with a supervised driver or a supervisor transport",
    group: "admission",
    capability: "harness.openma_supervised",
    tier: "capability",
  }),
  conformanceCase({
    id: "lifecycle.lease-json-safe",
    title: "the lease is JSON-safe and holds no handle, token or secret",
    group: "lifecycle",
    capability: "lease",
    tier: "core",
  }),
  conformanceCase({
    id: "lifecycle.heartbeat-lost",
    title: "heartbeat reports lost once the provider deleted the runtime",
    group: "lifecycle",
    capability: "heartbeat",
    tier: "core",
  }),
  conformanceCase({
    id: "lifecycle.terminate-idempotent",
    title: "terminate is idempotent for completed, failed and lease_lost",
    group: "lifecycle",
    capability: "terminate",
    tier: "core",
  }),
  conformanceCase({
    id: "lifecycle.reap-serialized",
    title:
      "reap works twice from a serialized lease on a fresh port instance and refuses foreign leases",
    group: "lifecycle",
    capability: "reap",
    tier: "core",
  }),
  conformanceCase({
    id: "lifecycle.orphan-retry",
    title: "a failed terminate becomes a token-free orphan that the reconciler reaps",
    group: "lifecycle",
    capability: "orphan reap",
    tier: "core",
  }),
  conformanceCase({
    id: "lifecycle.suspend",
    title: "suspend retains the runtime when supported and throws unsupported_operation otherwise",
    group: "lifecycle",
    capability: "sandbox.suspendResume",
    tier: "capability",
  }),
  conformanceCase({
    id: "lifecycle.fork-unsupported",
    title: "no port offers a fork, and no catalog row claims one",
    group: "lifecycle",
    capability: "sandbox fork",
    tier: "core",
  }),
  conformanceCase({
    id: "processes.exec-exit-code",
    title:
      "a missing harness binary fails acquire with readiness_failed carrying the exit code and output",
    group: "processes",
    capability: "exec",
    tier: "core",
  }),
  conformanceCase({
    id: "processes.workspace-files",
    title: "harness processes start in /workspace and read back what they write there",
    group: "processes",
    capability: "workspace files",
    tier: "core",
  }),
  conformanceCase({
    id: "processes.bytes-io",
    title: "binary output files are collected byte for byte",
    group: "processes",
    capability: "file bytes I/O",
    tier: "capability",
  }),
  conformanceCase({
    id: "processes.duplex-stdin",
    title: "the supervised lane carries stdin to the supervisor and its events back",
    group: "processes",
    capability: "duplex stdin",
    tier: "capability",
  }),
  conformanceCase({
    id: "persistence.workspace",
    title: "the workspace written in one run is there in a fresh acquire of the next",
    group: "persistence",
    capability: "workspace persistence",
    tier: "capability",
  }),
  conformanceCase({
    id: "persistence.outputs",
    title: "files in /mnt/session/outputs are collected into a published manifest",
    group: "persistence",
    capability: "session outputs",
    tier: "capability",
  }),
  conformanceCase({
    id: "persistence.memory-stores",
    title:
      "memory stores appear at /mnt/memory/<store>/, writes reach writable stores only, and unclaimed stores are refused",
    group: "persistence",
    capability: "memoryStores",
    tier: "capability",
  }),
  conformanceCase({
    id: "credentials.guest-env",
    title: "with hosted inference on, no provider key reaches the guest environment",
    group: "credentials",
    capability: "guest environment",
    tier: "core",
  }),
  conformanceCase({
    id: "credentials.token-redaction",
    title: "the inference proxy token appears in no lease, checkpoint, manifest, URL or log field",
    group: "credentials",
    capability: "secret redaction",
    tier: "core",
  }),
  conformanceCase({
    id: "readiness.lease-gated",
    title: "no lease is published and no harness starts until the readiness probe passed",
    group: "readiness",
    capability: "readiness probe",
    tier: "core",
  }),
] as const;

/** Id of a case in {@link CONFORMANCE_CASES}. */
export type ConformanceCaseId = (typeof CONFORMANCE_CASES)[number]["id"];

/** Every case id, in run order. */
export const CONFORMANCE_CASE_IDS: readonly ConformanceCaseId[] = CONFORMANCE_CASES.map(
  (entry) => entry.id,
);
