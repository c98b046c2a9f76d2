import type { BridgeClient } from "@open-managed-agents/managed-runtime-cloudflare-bridge";

/** Runs a shell script in a bridge sandbox and returns its stdout; a non-zero exit throws with stderr. */
export async function sandboxShell(
  client: BridgeClient,
  sandboxId: string,
  script: string,
): Promise<string> {
  const decoder = { stdout: new TextDecoder(), stderr: new TextDecoder() };
  let stdout = "";
  let stderr = "";
  for await (const event of client.exec(sandboxId, { argv: ["sh", "-c", script] })) {
    if (event.type === "exit") {
      if (event.exitCode !== 0)
        throw new Error(`sandbox script exited ${event.exitCode}: ${stderr.slice(0, 500)}`);
      return stdout;
    }
    if (event.type === "stdout") stdout += decoder.stdout.decode(event.data, { stream: true });
    else stderr += decoder.stderr.decode(event.data, { stream: true });
  }
  throw new Error("sandbox script ended without an exit status");
}

/** Times an async step in milliseconds. */
export async function timed<T>(step: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const start = performance.now();
  const value = await step();
  return { value, ms: performance.now() - start };
}
