import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it } from "vitest";
import {
  RUNTIME_READY_MARKER,
  readinessProbeCommand,
  verifyRuntimeEnvironment,
} from "../src/index.js";
import type { SandboxExecResult, SandboxPort } from "../src/index.js";

// Against a real shell in @open-managed-agents/local-confinement (test/readiness.test.ts).

async function failure(promise: Promise<unknown>): Promise<ManagedRuntimeError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(ManagedRuntimeError.isInstance(error)).toBe(true);
  return error as ManagedRuntimeError;
}

describe("verifyRuntimeEnvironment (output checks)", () => {
  // Stands in for a provider whose exec misreports; no real shell prints success without the marker.
  const answering = (result: SandboxExecResult): SandboxPort => ({
    exec: async () => result,
    readFile: async () => "",
    writeFile: async () => undefined,
  });

  it("fails when the exit code is 0 but the marker is absent", async () => {
    const error = await failure(
      verifyRuntimeEnvironment(
        answering({ exitCode: 0, stdout: "/bin/sh\n", stderr: "", output: "/bin/sh\n" }),
        { command: "sh" },
      ),
    );
    expect(error.code).toBe("readiness_failed");
    expect(error.message).toContain("did not print the readiness marker");
    expect(error.context).toMatchObject({ exitCode: 0, output: "/bin/sh\n" });
  });

  it("puts the combined output into message and context", async () => {
    const output = "sh: 1: harness: Permission denied\n";
    const error = await failure(
      verifyRuntimeEnvironment(answering({ exitCode: 126, stdout: "", stderr: output, output }), {
        command: "harness",
      }),
    );
    expect(error.message).toContain(output.trim());
    expect(error.context).toMatchObject({ exitCode: 126, output });
  });

  it("wraps a non-typed exec failure as readiness_failed", async () => {
    const broken: SandboxPort = {
      exec: async () => Promise.reject(new Error("socket closed")),
      readFile: async () => "",
      writeFile: async () => undefined,
    };
    const error = await failure(verifyRuntimeEnvironment(broken, { command: "sh" }));
    expect(error.code).toBe("readiness_failed");
    expect(error.message).toContain("socket closed");
  });
});

describe("readinessProbeCommand", () => {
  it("quotes the command so shell syntax in it is never run", () => {
    expect(readinessProbeCommand("it's")).toBe(
      `command -v 'it'\\''s' && printf '%s\\n' '${RUNTIME_READY_MARKER}'`,
    );
  });
});
