import { describe, expect, it } from "vitest";
import { sdkFailure } from "../src/sdk/sdk-errors.js";

function sdkError(name: string, message: string, code?: string): Error {
  const error = new Error(message) as Error & { code?: string };
  error.name = name;
  if (code) error.code = code;
  return error;
}

describe("sdkFailure", () => {
  it.each([
    [sdkError("FileNotFoundError", "File not found: /workspace/x", "FILE_NOT_FOUND"), "not_found"],
    [sdkError("Error", "Command timed out after 1000ms"), "timeout"],
    [
      sdkError(
        "InvalidBackupConfigError",
        "BACKUP_BUCKET binding is missing",
        "INVALID_BACKUP_CONFIG",
      ),
      "invalid_config",
    ],
    [sdkError("MissingCredentialsError", "No credentials found for the bucket"), "invalid_config"],
    [sdkError("Error", "InvalidMountConfigError: endpoint is required"), "invalid_config"],
    [sdkError("Error", "container crashed"), "sandbox_failed"],
  ])("maps %s to %s", (error, code) => {
    const mapped = sdkFailure(error, "exec");
    expect(mapped.code).toBe(code);
    expect(mapped.context.operation).toBe("exec");
  });

  it.each([
    // How the SDK 0.12.10 words a call cut off by a lost runtime connection, also when the runtime simply died.
    [
      "its class and code",
      sdkError(
        "OperationInterruptedError",
        "Sandbox operation exec was interrupted while the platform was updating the sandbox runtime",
        "OPERATION_INTERRUPTED",
      ),
    ],
    [
      "its message flattened by Durable Object RPC",
      sdkError(
        "Error",
        "OperationInterruptedError: Sandbox operation exec was interrupted while the platform was updating the sandbox runtime",
      ),
    ],
    ["the connection error itself", sdkError("Error", "Network connection lost.")],
    [
      "a container the SDK reports unavailable",
      sdkError("ContainerUnavailableError", "Container is not available", "CONTAINER_UNAVAILABLE"),
    ],
  ])(
    "maps an interrupted call (%s) to unavailable naming the runtime connection, not a platform update",
    (_case, error) => {
      const mapped = sdkFailure(error, "exec");
      expect(mapped.code).toBe("unavailable");
      expect(mapped.message).toBe(
        "exec failed: the connection to the sandbox's container runtime was lost mid-call (the runtime stopped, crashed or was replaced); the call's effect is unknown",
      );
      expect(mapped.cause).toBe(error);
    },
  );
});
