import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  ManagedRuntimeError,
  ReadinessFailedError,
} from "@open-managed-agents/runtime-resource-contract";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  RUNTIME_READY_MARKER,
  type SandboxPort,
  readinessProbeCommand,
  verifyRuntimeEnvironment,
} from "@open-managed-agents/sandbox";
import {
  type LocalSubprocessRuntime,
  createLocalSubprocessSandboxProvider,
} from "../src/local-subprocess/index.js";

let rootDir: string;
let sandbox: LocalSubprocessRuntime;

beforeAll(async () => {
  rootDir = await mkdtemp(join(tmpdir(), "readiness-test-"));
  sandbox = await createLocalSubprocessSandboxProvider({ rootDir }).create({
    sessionId: "readiness",
    workdir: "/workspace",
  });
});

afterAll(async () => {
  await sandbox.destroy();
  await rm(rootDir, { recursive: true, force: true });
});

async function failure(promise: Promise<unknown>): Promise<ManagedRuntimeError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(ManagedRuntimeError.isInstance(error)).toBe(true);
  return error as ManagedRuntimeError;
}

// The sandbox layer's readiness probe against a real shell: the local-subprocess provider.
describe("verifyRuntimeEnvironment (local-subprocess sandbox)", () => {
  it("passes for a command on PATH and returns output holding the marker", async () => {
    const result = await verifyRuntimeEnvironment(sandbox, { command: "sh" });
    expect(result.output).toContain(RUNTIME_READY_MARKER);
  });

  it("passes for an absolute executable", async () => {
    await expect(verifyRuntimeEnvironment(sandbox, { command: "/bin/sh" })).resolves.toMatchObject({
      output: expect.stringContaining(RUNTIME_READY_MARKER),
    });
  });

  it("fails with readiness_failed for a missing binary, naming the exit code", async () => {
    const error = await failure(
      verifyRuntimeEnvironment(sandbox, { command: "openma-missing-harness" }),
    );
    expect(error).toBeInstanceOf(ReadinessFailedError);
    expect(error.code).toBe("readiness_failed");
    const exitCode = error.context.exitCode;
    expect(typeof exitCode === "number" && exitCode !== 0).toBe(true);
    expect(error.message).toContain(`exited with code ${exitCode}`);
    expect(error.message).toContain("openma-missing-harness is not on the runtime's PATH");
    expect(error.context.command).toBe("openma-missing-harness");
    expect(error.message).not.toContain(RUNTIME_READY_MARKER);
  });

  it("fails for a non-executable absolute path and keeps the shell's output", async () => {
    await sandbox.writeFile("/workspace/not-executable", "data");
    const error = await failure(
      verifyRuntimeEnvironment(sandbox, { command: "/workspace/not-executable; echo injected" }),
    );
    expect(error.code).toBe("readiness_failed");
    expect(error.context.exitCode).toBe(1);
  });

  it("quotes the command so shell syntax in it is never run", async () => {
    const error = await failure(
      verifyRuntimeEnvironment(sandbox, { command: `sh; echo ${RUNTIME_READY_MARKER}` }),
    );
    expect(error.code).toBe("readiness_failed");
    expect(readinessProbeCommand("it's")).toBe(
      `command -v 'it'\\''s' && printf '%s\\n' '${RUNTIME_READY_MARKER}'`,
    );
  });

  it("passes a timeout through as a typed error", async () => {
    const slow: SandboxPort = {
      exec: (command, options) => sandbox.exec(`sleep 5; ${command}`, options),
      readFile: sandbox.readFile,
      writeFile: sandbox.writeFile,
    };
    const error = await failure(verifyRuntimeEnvironment(slow, { command: "sh", timeoutMs: 200 }));
    expect(error.code).toBe("timeout");
  });
});

describe("verifyRuntimeEnvironment with reportVersion", () => {
  it("returns the first printable line after the marker, and null when the command prints none", async () => {
    await sandbox.writeFile(
      "/workspace/versioned",
      "#!/bin/sh\n[ \"$1\" = --version ] && printf 'tool 1.2.3\\001\\nmore\\n'\nexit 0\n",
    );
    await sandbox.exec("chmod +x /workspace/versioned");
    const result = await verifyRuntimeEnvironment(sandbox, {
      command: "/workspace/versioned",
      reportVersion: true,
    });
    expect(result.version).toBe("tool 1.2.3");
    expect(
      (await verifyRuntimeEnvironment(sandbox, { command: "true", reportVersion: true })).version,
    ).toBeNull();
    expect(
      await verifyRuntimeEnvironment(sandbox, { command: "/workspace/versioned" }),
    ).not.toHaveProperty("version");
  });

  it("still fails the probe on a missing harness, whatever --version would print", async () => {
    expect(
      (
        await failure(
          verifyRuntimeEnvironment(sandbox, {
            command: "openma-missing-harness",
            reportVersion: true,
          }),
        )
      ).code,
    ).toBe("readiness_failed");
  });
});
