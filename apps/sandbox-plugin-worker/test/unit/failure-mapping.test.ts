import { describe, expect, it } from "vitest";
import { classifyOperationFailure } from "../../src/sandbox/operation-failures.js";
import { classifyStartFailure } from "../../src/sandbox/start-failures.js";

describe("classifyStartFailure", () => {
  it("maps Cloudflare's no-instance and rate messages to insufficient_capacity (503)", () => {
    for (const message of [
      "there is no container instance that can be provided to this durable object",
      "There is no Container instance available at this time.",
      "Maximum number of running container instances exceeded",
      "you are requesting too many containers per second",
    ]) {
      const error = classifyStartFailure(new Error(message), "img");
      expect(error.code, message).toBe("insufficient_capacity");
      expect(error.httpStatus).toBe(503);
    }
  });

  it("finds the platform message in the cause chain, as the container library wraps it", () => {
    const wrapped = new Error("Container did not start", {
      cause: new Error(
        "there is no container instance that can be provided to this durable object",
      ),
    });
    expect(classifyStartFailure(wrapped, "img").code).toBe("insufficient_capacity");
  });

  it("maps an image the application lacks to invalid_request and other failures to sandbox_failed", () => {
    expect(classifyStartFailure(new Error("no such image: x"), "x")).toMatchObject({
      code: "invalid_request",
      context: { image: "x" },
    });
    expect(
      classifyStartFailure(new Error("No application that matches this request"), "x").code,
    ).toBe("invalid_request");
    expect(
      classifyStartFailure(new Error("container exited with unexpected exit code: 1"), "x").code,
    ).toBe("sandbox_failed");
    expect(
      classifyStartFailure(
        new Error("Container exited before we could determine the container health, exit code: 2"),
        "x",
      ).code,
    ).toBe("sandbox_failed");
    expect(classifyStartFailure("boom", "x").httpStatus).toBe(502);
  });
});

describe("classifyOperationFailure", () => {
  const sdkError = (code: string, message: string) => Object.assign(new Error(message), { code });

  it("maps SDK codes and flattened messages to contract codes", () => {
    expect(
      classifyOperationFailure(sdkError("FILE_NOT_FOUND", "File not found: /a"), "read").code,
    ).toBe("not_found");
    expect(
      classifyOperationFailure(new Error("File streaming error: File not found: /a"), "read").code,
    ).toBe("not_found");
    expect(
      classifyOperationFailure(new Error("File streaming error: Not a regular file: /a"), "read")
        .code,
    ).toBe("invalid_request");
    expect(classifyOperationFailure(sdkError("IS_DIRECTORY", "is a directory"), "write").code).toBe(
      "invalid_request",
    );
    expect(classifyOperationFailure(sdkError("FILE_TOO_LARGE", "too large"), "read").code).toBe(
      "limit_exceeded",
    );
    expect(
      classifyOperationFailure(sdkError("CONTAINER_UNAVAILABLE", "no instance"), "exec").code,
    ).toBe("insufficient_capacity");
    expect(classifyOperationFailure(sdkError("INTERNAL_ERROR", "boom"), "exec")).toMatchObject({
      code: "sandbox_failed",
      context: { operation: "exec", sdkCode: "INTERNAL_ERROR" },
    });
  });
});
