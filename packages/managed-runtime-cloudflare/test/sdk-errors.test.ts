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
    [sdkError("InvalidBackupConfigError", "BACKUP_BUCKET binding is missing", "INVALID_BACKUP_CONFIG"), "invalid_config"],
    [sdkError("MissingCredentialsError", "No credentials found for the bucket"), "invalid_config"],
    [sdkError("Error", "InvalidMountConfigError: endpoint is required"), "invalid_config"],
    [sdkError("Error", "container crashed"), "sandbox_failed"],
  ])("maps %s to %s", (error, code) => {
    const mapped = sdkFailure(error, "exec");
    expect(mapped.code).toBe(code);
    expect(mapped.context.operation).toBe("exec");
  });
});
