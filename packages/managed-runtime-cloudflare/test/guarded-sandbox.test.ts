/**
 * When a destroyed sandbox's wrapper sends its destroys, relative to the calls that were in flight. A scripted
 * `CloudflareSandbox` stands in for the Sandbox Durable Object, since the point is the order of calls; the
 * workerd suites run the wrapper against the real object, where a call reaching it after a destroy starts a
 * fresh container.
 */
import { describe, expect, it } from "vitest";
import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { createDestroyedSandboxes } from "@open-managed-agents/managed-runtime-sandbox";
import { guardDestroyedSandbox } from "../src/runtime/guarded-sandbox.js";
import type {
  CloudflareProcessLogEvent,
  CloudflareSandbox,
} from "../src/sandbox/cloudflare-sandbox.js";
import { unreachableSandbox } from "./fake-sandbox.js";

/** A promise and the function that settles it. */
function gate() {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

/** A sandbox whose renewals, log stream and destroys each wait for a gate, recording when they start and end. */
function scriptedSandbox() {
  const calls: string[] = [];
  const renewal = gate();
  const logs = gate();
  const destroys = [gate(), gate(), gate()];
  let destroyCount = 0;
  const sandbox: CloudflareSandbox = {
    ...unreachableSandbox(),
    async renewActivityTimeout() {
      calls.push("renew:start");
      await renewal.opened;
      calls.push("renew:end");
    },
    // biome-ignore lint/correctness/useYield: a log stream that breaks before its first event.
    async *processLogs(): AsyncGenerator<CloudflareProcessLogEvent> {
      calls.push("logs:start");
      await logs.opened;
      calls.push("logs:end");
      throw new Error("the stream broke under the destroy");
    },
    async destroy() {
      const index = destroyCount++;
      calls.push(`destroy ${index}:start`);
      await destroys[index]?.opened;
      calls.push(`destroy ${index}:end`);
    },
  };
  return { sandbox, calls, renewal, logs, destroys };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 20));

describe("guarded sandbox", () => {
  it("follows a call that was in flight at the destroy with one more destroy, sent after the first answered", async () => {
    const scripted = scriptedSandbox();
    const guarded = guardDestroyedSandbox(createDestroyedSandboxes(), "rt-1", scripted.sandbox);
    const renewal = guarded.renewActivityTimeout();
    await tick();
    const destroyed = guarded.destroy();
    await tick();
    // The renewal reaches the object after the destroy went out, and answers before the destroy does.
    scripted.renewal.open();
    await renewal;
    await tick();
    expect(scripted.calls).toEqual(["renew:start", "destroy 0:start", "renew:end"]);
    scripted.destroys[0]?.open();
    await destroyed;
    await tick();
    expect(scripted.calls).toEqual([
      "renew:start",
      "destroy 0:start",
      "renew:end",
      "destroy 0:end",
      "destroy 1:start",
    ]);
    scripted.destroys[1]?.open();
    await tick();
    expect(scripted.calls.at(-1)).toBe("destroy 1:end");
  });

  it("follows a log stream that ends after the destroy with one more destroy", async () => {
    const scripted = scriptedSandbox();
    scripted.destroys[0]?.open();
    scripted.destroys[1]?.open();
    const guarded = guardDestroyedSandbox(createDestroyedSandboxes(), "rt-2", scripted.sandbox);
    const reading = (async () => {
      for await (const _ of guarded.processLogs("process-1", new AbortController().signal)) void _;
    })().catch((error: unknown) => error);
    await tick();
    await guarded.destroy();
    scripted.logs.open();
    expect(await reading).toBeInstanceOf(Error);
    await tick();
    expect(scripted.calls).toEqual([
      "logs:start",
      "destroy 0:start",
      "destroy 0:end",
      "logs:end",
      "destroy 1:start",
      "destroy 1:end",
    ]);
  });

  it("sends no destroy for calls that settle before it, and refuses calls after it without sending one", async () => {
    const scripted = scriptedSandbox();
    scripted.renewal.open();
    scripted.destroys[0]?.open();
    const guarded = guardDestroyedSandbox(createDestroyedSandboxes(), "rt-3", scripted.sandbox);
    await guarded.renewActivityTimeout();
    await tick();
    expect(scripted.calls).toEqual(["renew:start", "renew:end"]);
    await guarded.destroy();
    const refused = await guarded.renewActivityTimeout().then(
      () => null,
      (error: unknown) => error,
    );
    expect(ManagedRuntimeError.hasCode(refused, "lease_lost")).toBe(true);
    await tick();
    expect(scripted.calls).toEqual([
      "renew:start",
      "renew:end",
      "destroy 0:start",
      "destroy 0:end",
    ]);
  });
});
