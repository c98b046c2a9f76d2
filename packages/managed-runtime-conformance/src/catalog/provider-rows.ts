import type { ManagedRuntimeProviderConformance } from "./conformance-row.js";

// Every managed preset is fenced by the host, terminates hard and leaves failed terminates to the
// orphan reconciler; none retains a runtime or wires a RuntimeCheckpointPort yet.
const fencedLifecycle = {
  lease: "host-fenced",
  suspendResume: "unsupported",
  hardTerminate: "supported",
  orphanReap: "host-managed",
} as const;
const portableWorkspace = { strategies: ["checkpoint_restore"], durability: "durable" } as const;
const collectedOutputs = { strategies: ["final_collect"], durability: "durable" } as const;
const bothLanes = ["ama_worker", "openma_supervised"] as const;

const row = <const T extends ManagedRuntimeProviderConformance>(value: T): T => value;

/**
 * The provider rows, as literal data. A `derived` row belongs to a driver package in this repository, which
 * derives its own row with `deriveConformanceRow` and asserts it equals the row here, so that row cannot drift
 * from the code (test/meta/catalog-provenance.test.ts checks each such package has that test). A `declared`
 * row is written from the provider's documentation and is unverified: no driver here runs against it.
 */
export const PROVIDER_ROWS = [
  row({
    id: "node-docker",
    managedRuntime: true,
    status: "managed-runtime",
    driverLanes: bothLanes,
    lifecycle: fencedLifecycle,
    workspace: portableWorkspace,
    outputs: collectedOutputs,
    runtimeCheckpoints: [],
    sandboxPortFacts: {
      available: [
        "duplex_process",
        "streaming_process_stdin",
        "file_bytes_io",
        "workspace_tar_checkpoint",
        "container_image",
      ],
      unavailable: ["provider_lease", "process_memory_checkpoint", "sandbox_fork"],
    },
    reason:
      "A local container per work item, booted from an explicit image; the container engine has no lease of its own.",
    provenance: { source: "declared", documentation: "https://docs.docker.com/engine/api/" },
  }),
  row({
    id: "cloudflare",
    managedRuntime: true,
    status: "managed-runtime",
    driverLanes: bothLanes,
    lifecycle: fencedLifecycle,
    workspace: portableWorkspace,
    outputs: collectedOutputs,
    runtimeCheckpoints: [],
    sandboxPortFacts: {
      available: [
        "duplex_process",
        "streaming_process_stdin",
        "interactive_stdin_without_pty",
        "file_bytes_io",
        "workspace_backup",
        "provider_lease",
        "container_image",
      ],
      unavailable: ["runtime_scoped_resume", "process_memory_checkpoint", "sandbox_fork"],
    },
    provenance: {
      source: "derived",
      driverPackage: "@open-managed-agents/managed-runtime-cloudflare",
    },
  }),
  row({
    id: "cloudflare-bridge",
    managedRuntime: true,
    status: "managed-runtime",
    driverLanes: ["ama_worker"],
    lifecycle: fencedLifecycle,
    workspace: portableWorkspace,
    outputs: collectedOutputs,
    runtimeCheckpoints: [],
    memoryStores: "file_sync",
    sandboxPortFacts: {
      available: [
        "http_bridge",
        "argv_sse_process",
        "workspace_file_io",
        "workspace_tar_checkpoint",
      ],
      unavailable: ["interactive_stdin_without_pty", "provider_lease", "process_memory_checkpoint"],
    },
    reason:
      "The host reaches an operator-deployed Cloudflare Sandbox Bridge over HTTP; work claiming and fencing stay with the host.",
    provenance: {
      source: "derived",
      driverPackage: "@open-managed-agents/managed-runtime-cloudflare-bridge",
    },
  }),
  row({
    id: "e2b",
    managedRuntime: true,
    status: "managed-runtime",
    driverLanes: bothLanes,
    lifecycle: fencedLifecycle,
    workspace: portableWorkspace,
    outputs: collectedOutputs,
    runtimeCheckpoints: [],
    sandboxPortFacts: {
      available: [
        "duplex_process",
        "streaming_process_stdin",
        "file_bytes_io",
        "provider_lease",
        "provider_template",
      ],
      unavailable: ["process_memory_checkpoint", "runtime_scoped_resume"],
    },
    reason:
      "Boots only from an operator-named template; pause with memory exists at the provider but no runtime checkpoint port is wired.",
    provenance: { source: "declared", documentation: "https://e2b.dev/docs" },
  }),
  row({
    id: "daytona",
    managedRuntime: true,
    status: "managed-runtime",
    driverLanes: bothLanes,
    lifecycle: fencedLifecycle,
    workspace: portableWorkspace,
    outputs: collectedOutputs,
    runtimeCheckpoints: [],
    sandboxPortFacts: {
      available: [
        "duplex_process",
        "streaming_process_stdin",
        "file_bytes_io",
        "provider_lease",
        "container_image",
      ],
      unavailable: ["process_memory_checkpoint", "sandbox_fork"],
    },
    provenance: { source: "declared", documentation: "https://www.daytona.io/docs" },
  }),
  row({
    id: "litebox",
    managedRuntime: true,
    status: "managed-runtime",
    driverLanes: bothLanes,
    lifecycle: fencedLifecycle,
    workspace: portableWorkspace,
    outputs: collectedOutputs,
    runtimeCheckpoints: [],
    sandboxPortFacts: {
      available: ["duplex_process", "streaming_process_stdin", "file_bytes_io", "container_image"],
      unavailable: ["provider_lease", "process_memory_checkpoint"],
    },
    provenance: { source: "declared" },
  }),
  row({
    id: "boxrun",
    managedRuntime: true,
    status: "managed-runtime",
    driverLanes: bothLanes,
    lifecycle: fencedLifecycle,
    workspace: portableWorkspace,
    outputs: collectedOutputs,
    runtimeCheckpoints: [],
    sandboxPortFacts: {
      available: ["duplex_process", "streaming_process_stdin", "file_bytes_io", "container_image"],
      unavailable: ["provider_lease", "process_memory_checkpoint"],
    },
    provenance: { source: "declared" },
  }),
  row({
    id: "blaxel",
    managedRuntime: true,
    status: "managed-runtime",
    driverLanes: ["ama_worker"],
    lifecycle: fencedLifecycle,
    workspace: portableWorkspace,
    outputs: collectedOutputs,
    runtimeCheckpoints: [],
    sandboxPortFacts: {
      available: ["file_bytes_io", "provider_template"],
      unavailable: ["streaming_process_stdin", "process_memory_checkpoint", "sandbox_fork"],
    },
    reason:
      "Process stdin pipes are not retried and vanish when the provider's sandbox API restarts, so the supervised lane is not claimed.",
    provenance: { source: "declared", documentation: "https://docs.blaxel.ai" },
  }),
  row({
    id: "sprites",
    managedRuntime: true,
    status: "managed-runtime",
    driverLanes: bothLanes,
    lifecycle: fencedLifecycle,
    workspace: portableWorkspace,
    outputs: collectedOutputs,
    runtimeCheckpoints: [],
    sandboxPortFacts: {
      available: ["duplex_process", "streaming_process_stdin", "file_bytes_io"],
      unavailable: ["process_memory_checkpoint", "sandbox_fork"],
    },
    reason:
      "Provider checkpoints rewind a sprite in place; they are not used as portable workspace checkpoints.",
    provenance: { source: "declared" },
  }),
  row({
    id: "vercel",
    managedRuntime: true,
    status: "managed-runtime",
    driverLanes: ["ama_worker"],
    lifecycle: fencedLifecycle,
    workspace: portableWorkspace,
    outputs: collectedOutputs,
    runtimeCheckpoints: [],
    sandboxPortFacts: {
      available: ["duplex_process", "file_bytes_io", "provider_lease", "provider_template"],
      unavailable: ["streaming_process_stdin", "process_memory_checkpoint"],
    },
    reason:
      "The command API streams stdout and stderr but not stdin, so only the AMA worker lane is claimed.",
    provenance: { source: "declared", documentation: "https://vercel.com/docs/vercel-sandbox" },
  }),
  row({
    id: "modal",
    managedRuntime: true,
    status: "managed-runtime",
    driverLanes: bothLanes,
    lifecycle: fencedLifecycle,
    workspace: portableWorkspace,
    outputs: collectedOutputs,
    runtimeCheckpoints: [],
    sandboxPortFacts: {
      available: ["duplex_process", "streaming_process_stdin", "file_bytes_io", "container_image"],
      unavailable: ["provider_lease", "process_memory_checkpoint"],
    },
    reason: "Timeouts are fixed when the sandbox is created; there is no lease to extend.",
    provenance: { source: "declared", documentation: "https://modal.com/docs/guide/sandbox" },
  }),
  row({
    id: "superserve",
    managedRuntime: true,
    status: "managed-runtime",
    driverLanes: ["ama_worker"],
    lifecycle: fencedLifecycle,
    workspace: portableWorkspace,
    outputs: collectedOutputs,
    runtimeCheckpoints: [],
    sandboxPortFacts: {
      available: ["file_bytes_io"],
      unavailable: ["streaming_process_stdin", "process_memory_checkpoint", "sandbox_fork"],
    },
    reason:
      "Streaming stdin is not documented by the provider, so only the AMA worker lane is claimed.",
    provenance: { source: "declared" },
  }),
] as const;
