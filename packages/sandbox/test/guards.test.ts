import { describe, expect, it } from "vitest";
import {
  supportsBackgroundProcess,
  supportsBytesFileIO,
  supportsDestroy,
  supportsDuplexProcess,
  supportsManagedWorkspaceLifecycle,
  supportsSandboxRuntime,
  supportsSessionOutputMount,
  supportsWorkspaceBackup,
} from "../src/index.js";
import type { SandboxPort } from "../src/index.js";

const noop = async (): Promise<never> => {
  throw new Error("not called");
};

/** The smallest valid sandbox: only the three required members. */
function minimalSandbox(extra: Record<string, unknown> = {}): SandboxPort {
  return { exec: noop, readFile: noop, writeFile: noop, ...extra } as SandboxPort;
}

const GUARDS = [
  {
    guard: supportsSandboxRuntime,
    methods: [
      "runtimeHandle",
      "runtimeCapabilities",
      "status",
      "renewLease",
      "suspend",
      "resume",
      "checkpoint",
      "destroy",
    ],
  },
  { guard: supportsDuplexProcess, methods: ["spawnDuplexProcess"] },
  { guard: supportsWorkspaceBackup, methods: ["createWorkspaceBackup", "restoreWorkspaceBackup"] },
  {
    guard: supportsSessionOutputMount,
    methods: ["sessionOutputMountCapabilities", "mountSessionOutputs"],
  },
  { guard: supportsManagedWorkspaceLifecycle, methods: ["mountWorkspace", "unmountWorkspace"] },
  { guard: supportsBytesFileIO, methods: ["readFileBytes", "writeFileBytes"] },
  { guard: supportsBackgroundProcess, methods: ["startProcess"] },
  { guard: supportsDestroy, methods: ["destroy"] },
] as const;

describe("supports* guards", () => {
  for (const { guard, methods } of GUARDS) {
    describe(guard.name, () => {
      it("is false for a sandbox with only the required members", () => {
        expect(guard(minimalSandbox())).toBe(false);
      });

      it("is true when every method is a function", () => {
        expect(
          guard(minimalSandbox(Object.fromEntries(methods.map((method) => [method, noop])))),
        ).toBe(true);
      });

      it.each(methods)("is false when %s is missing", (missing) => {
        const members = Object.fromEntries(
          methods.filter((method) => method !== missing).map((method) => [method, noop]),
        );
        expect(guard(minimalSandbox(members))).toBe(false);
      });

      it("is false when a member is present but not a function", () => {
        const members = Object.fromEntries(
          methods.map((method, index) => [method, index === 0 ? true : noop]),
        );
        expect(guard(minimalSandbox(members))).toBe(false);
      });
    });
  }

  it("finds methods on a class prototype", () => {
    class Sandbox {
      exec = noop;
      readFile = noop;
      writeFile = noop;
      async destroy(): Promise<void> {}
    }
    expect(supportsDestroy(new Sandbox())).toBe(true);
    expect(supportsDuplexProcess(new Sandbox())).toBe(false);
  });

  it("is false for null and non-objects", () => {
    expect(supportsDestroy(null as unknown as SandboxPort)).toBe(false);
    expect(supportsDestroy("sandbox" as unknown as SandboxPort)).toBe(false);
  });
});
