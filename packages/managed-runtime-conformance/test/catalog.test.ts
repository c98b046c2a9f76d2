import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it } from "vitest";
import {
  MANAGED_RUNTIME_PROVIDER_CONFORMANCE,
  MANAGED_RUNTIME_PROVIDER_IDS,
  createConformanceCatalog,
  describeRowProvenance,
  getManagedRuntimeProviderConformance,
  isManagedRuntimeProviderId,
  requireManagedRuntimeProvider,
} from "../src/index.js";

const codeOf = (action: () => unknown): string | undefined => {
  try {
    action();
  } catch (error) {
    return ManagedRuntimeError.isInstance(error) ? error.code : `untyped ${String(error)}`;
  }
  return undefined;
};

describe("provider conformance catalog", () => {
  it("has one managed-runtime row per preset, none with runtime checkpoints", () => {
    expect(MANAGED_RUNTIME_PROVIDER_IDS).toEqual([
      "node-docker",
      "cloudflare",
      "cloudflare-bridge",
      "e2b",
      "daytona",
      "litebox",
      "boxrun",
      "blaxel",
      "sprites",
      "vercel",
      "modal",
      "superserve",
    ]);
    for (const row of MANAGED_RUNTIME_PROVIDER_CONFORMANCE) {
      expect(row).toMatchObject({
        managedRuntime: true,
        status: "managed-runtime",
        runtimeCheckpoints: [],
      });
      expect(row.driverLanes).toContain("ama_worker");
    }
  });

  it("describes the Cloudflare bridge driver", () => {
    expect(getManagedRuntimeProviderConformance("cloudflare-bridge")).toMatchObject({
      driverLanes: ["ama_worker"],
      lifecycle: {
        lease: "host-fenced",
        suspendResume: "unsupported",
        hardTerminate: "supported",
        orphanReap: "host-managed",
      },
      workspace: { strategies: ["checkpoint_restore"], durability: "durable" },
      outputs: { strategies: ["final_collect"], durability: "durable" },
      sandboxPortFacts: {
        available: [
          "http_bridge",
          "argv_sse_process",
          "workspace_file_io",
          "workspace_tar_checkpoint",
        ],
        unavailable: [
          "interactive_stdin_without_pty",
          "provider_lease",
          "process_memory_checkpoint",
        ],
      },
    });
  });

  it("describes the Cloudflare Sandbox SDK driver", () => {
    expect(getManagedRuntimeProviderConformance("cloudflare")).toMatchObject({
      driverLanes: ["ama_worker", "openma_supervised"],
      workspace: { strategies: ["checkpoint_restore"], durability: "durable" },
      outputs: { strategies: ["final_collect"], durability: "durable" },
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
    });
  });

  it("is frozen", () => {
    const row = getManagedRuntimeProviderConformance("vercel");
    expect(Object.isFrozen(row) && Object.isFrozen(row.sandboxPortFacts.unavailable)).toBe(true);
  });

  it("looks providers up with typed errors", () => {
    expect(requireManagedRuntimeProvider("e2b")).toBe("e2b");
    expect(isManagedRuntimeProviderId("modal")).toBe(true);
    expect(isManagedRuntimeProviderId("firecracker")).toBe(false);
    expect(codeOf(() => getManagedRuntimeProviderConformance("firecracker"))).toBe("not_found");
    expect(codeOf(() => requireManagedRuntimeProvider("firecracker"))).toBe("not_found");
    expect(codeOf(() => requireManagedRuntimeProvider(""))).toBe("invalid_request");
    expect(codeOf(() => requireManagedRuntimeProvider(42 as unknown as string))).toBe(
      "invalid_request",
    );
  });

  it("refuses a tool-sandbox-only row as a managed runtime", () => {
    const base = getManagedRuntimeProviderConformance("vercel");
    const catalog = createConformanceCatalog([
      { ...base, id: "tool-only", managedRuntime: false, status: "sandbox-port-only" },
    ]);
    expect(catalog.get("tool-only").status).toBe("sandbox-port-only");
    expect(codeOf(() => catalog.require("tool-only"))).toBe("capability_unsupported");
  });

  it("validates rows and rejects duplicates", () => {
    const base = getManagedRuntimeProviderConformance("modal");
    expect(codeOf(() => createConformanceCatalog([base, base]))).toBe("invalid_config");
    expect(
      codeOf(() =>
        createConformanceCatalog([
          { ...base, sandboxPortFacts: { available: ["teleport"], unavailable: [] } },
        ]),
      ),
    ).toBe("invalid_config");
    expect(
      codeOf(() =>
        createConformanceCatalog([
          {
            ...base,
            sandboxPortFacts: { available: ["file_bytes_io"], unavailable: ["file_bytes_io"] },
          },
        ]),
      ),
    ).toBe("invalid_config");
    expect(codeOf(() => createConformanceCatalog([{ ...base, managedRuntime: false }]))).toBe(
      "invalid_config",
    );
    expect(codeOf(() => createConformanceCatalog([{ ...base, driverLanes: [] }]))).toBe(
      "invalid_config",
    );
  });
});

describe("catalog row provenance", () => {
  it("marks the two rows with a driver in this repository as derived, naming the package, and every other row as declared", () => {
    const derived = MANAGED_RUNTIME_PROVIDER_CONFORMANCE.filter(
      (row) => row.provenance.source === "derived",
    );
    expect(derived.map((row) => [row.id, row.provenance])).toEqual([
      [
        "cloudflare",
        { source: "derived", driverPackage: "@open-managed-agents/managed-runtime-cloudflare" },
      ],
      [
        "cloudflare-bridge",
        {
          source: "derived",
          driverPackage: "@open-managed-agents/managed-runtime-cloudflare-bridge",
        },
      ],
    ]);
    const declared = MANAGED_RUNTIME_PROVIDER_CONFORMANCE.filter(
      (row) => row.provenance.source === "declared",
    ).map((row) => row.id);
    expect(declared).toEqual([
      "node-docker",
      "e2b",
      "daytona",
      "litebox",
      "boxrun",
      "blaxel",
      "sprites",
      "vercel",
      "modal",
      "superserve",
    ]);
  });

  it("says in words how far a row can be trusted", () => {
    expect(
      describeRowProvenance(getManagedRuntimeProviderConformance("cloudflare-bridge").provenance),
    ).toBe(
      "derived from the driver @open-managed-agents/managed-runtime-cloudflare-bridge in this repository and checked equal to it by its tests",
    );
    expect(describeRowProvenance(getManagedRuntimeProviderConformance("e2b").provenance)).toBe(
      "declared from the provider's documentation (https://e2b.dev/docs); unverified, no driver in this repository",
    );
    expect(describeRowProvenance(getManagedRuntimeProviderConformance("boxrun").provenance)).toBe(
      "declared from the provider's documentation; unverified, no driver in this repository",
    );
  });

  it("is required, and a derived catalog row must name its driver package", () => {
    const { provenance: _omitted, ...base } = getManagedRuntimeProviderConformance("modal");
    expect(codeOf(() => createConformanceCatalog([base]))).toBe("invalid_config");
    expect(
      codeOf(() => createConformanceCatalog([{ ...base, provenance: { source: "derived" } }])),
    ).toBe("invalid_config");
    expect(
      codeOf(() =>
        createConformanceCatalog([
          { ...base, provenance: { source: "derived", driverPackage: "" } },
        ]),
      ),
    ).toBe("invalid_config");
    expect(
      codeOf(() =>
        createConformanceCatalog([
          { ...base, provenance: { source: "declared", documentation: "http://insecure.example" } },
        ]),
      ),
    ).toBe("invalid_config");
    expect(
      codeOf(() => createConformanceCatalog([{ ...base, provenance: { source: "guessed" } }])),
    ).toBe("invalid_config");
    expect(
      createConformanceCatalog([
        { ...base, provenance: { source: "derived", driverPackage: "@example/driver" } },
      ]).get("modal").provenance,
    ).toEqual({
      source: "derived",
      driverPackage: "@example/driver",
    });
  });
});
