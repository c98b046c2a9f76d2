import {
  InvalidConfigError,
  ManagedRuntimeError,
} from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it } from "vitest";
import { startLocalBridge } from "../src/index.js";

async function failure(
  options: Parameters<typeof startLocalBridge>[0],
): Promise<ManagedRuntimeError> {
  const error = await startLocalBridge(options).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!ManagedRuntimeError.isInstance(error)) throw new Error("expected a typed error");
  return error;
}

describe("startLocalBridge options", () => {
  it("fails closed for transports the local container server does not speak", async () => {
    const error = await failure({ transport: "rpc" as never });
    expect(error).toBeInstanceOf(InvalidConfigError);
    expect(error.context.field).toBe("transport");
    expect(error.message).toContain("does not speak the rpc transport");
  });

  it("refuses a weak API key without echoing it", async () => {
    const error = await failure({ apiKey: "short-key" });
    expect(error.code).toBe("invalid_config");
    expect(error.context.field).toBe("apiKey");
    expect(error.message).not.toContain("short-key");
    expect(JSON.stringify(error.toJSON())).not.toContain("short-key");
  });

  it("refuses out-of-range numbers and unknown options, naming the field", async () => {
    expect((await failure({ warmPoolTarget: -1 })).context.field).toBe("warmPoolTarget");
    expect((await failure({ limits: { maxBodyBytes: 0 } })).context.field).toBe(
      "limits.maxBodyBytes",
    );
    expect((await failure({ port: 70_000 })).context.field).toBe("port");
    expect((await failure({ requireBun: "yes" as never })).context.field).toBe("requireBun");
    expect((await failure({ apiKeyy: "x" } as never)).code).toBe("invalid_config");
  });
});

describe("resolveLauncherOptions limits", () => {
  it("takes every bound the server takes and forwards only those given", async () => {
    const { resolveLauncherOptions } = await import("../src/launcher/launcher-options.js");
    const resolved = resolveLauncherOptions({
      limits: { maxContainerMemoryBytes: 512 * 1024 * 1024, maxContainerCpus: 1.5 },
    });
    expect(resolved.limits).toEqual({
      maxContainerMemoryBytes: 512 * 1024 * 1024,
      maxContainerCpus: 1.5,
    });
    expect(() => resolveLauncherOptions({ limits: { maxContainerCpus: 0 } })).toThrow(
      /limits\.maxContainerCpus/,
    );
  });
});
