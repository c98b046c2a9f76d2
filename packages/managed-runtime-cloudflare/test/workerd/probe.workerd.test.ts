import { env } from "cloudflare:workers";
import { getSandbox } from "@cloudflare/sandbox";
import { expect, it } from "vitest";

it("runs a command through the real Sandbox DO", async () => {
  const sandbox = getSandbox((env as any).SANDBOX, "probe-1");
  const result = await sandbox.exec("echo hello; echo err >&2; exit 3");
  expect(result.exitCode).toBe(3);
  expect(result.stdout).toContain("hello");
});
