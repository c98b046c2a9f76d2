import type {
  ManagedSandboxLease,
  RuntimeOrphanRecord,
  RuntimeResourceFence,
} from "@open-managed-agents/runtime-resource-contract";
import type { FakeSandbox } from "../../src/testing/fake-sandbox.js";
import type { CallJournal, CallRecord } from "../../src/testing/journal.js";

/** Evidence about one host (one owner) after its runs ended. */
export interface OwnerEvidence {
  readonly label: string;
  readonly journal: CallJournal;
  readonly sandbox: FakeSandbox;
  readonly orphans: readonly RuntimeOrphanRecord[];
  /** Runtime ids a completed run deliberately retained (suspended and published). */
  readonly retained: ReadonlySet<string>;
  /** Runtime ids whose leak the host reported (terminate and orphan enqueue both failed). */
  readonly reportedLeaks: ReadonlySet<string>;
}

/** (1) Every runtime the fake provider started is stopped, orphaned, deliberately retained, or reported as leaked. */
export function unaccountedRuntimes(owner: OwnerEvidence): string[] {
  const orphaned = new Set(owner.orphans.map((orphan) => orphan.sandbox.runtimeId));
  const problems: string[] = [];
  for (const runtime of owner.sandbox.runtimes.values()) {
    if (runtime.state === "stopped" || orphaned.has(runtime.runtimeId)) continue;
    if (runtime.state === "suspended" && owner.retained.has(runtime.runtimeId)) continue;
    if (owner.reportedLeaks.has(runtime.runtimeId)) continue;
    problems.push(
      `${owner.label}: runtime ${runtime.runtimeId} is ${runtime.state}, neither terminated nor orphaned`,
    );
  }
  return problems;
}

/** (2) Whenever egress was attached to a runtime, it was revoked before that runtime was terminated, and revoked at all. */
export function egressOrderViolations(owner: OwnerEvidence): string[] {
  const calls = owner.journal.calls;
  const problems: string[] = [];
  for (const attach of calls.filter(
    (call) => call.port === "credentialEgress" && call.method === "attach",
  )) {
    const { binding, sandbox } = attach.input as {
      binding: { bindingId: string };
      sandbox: ManagedSandboxLease;
    };
    const revoke = calls.find(
      (call) =>
        call.port === "credentialEgress" &&
        call.method === "revoke" &&
        bindingOf(call) === binding.bindingId,
    );
    const terminate = calls.find(
      (call) =>
        call.port === "sandbox" &&
        call.method === "terminate" &&
        leaseOf(call).runtimeId === sandbox.runtimeId,
    );
    if (!revoke)
      problems.push(`${owner.label}: egress ${binding.bindingId} was attached and never revoked`);
    else if (terminate && terminate.seq < revoke.seq)
      problems.push(`${owner.label}: ${sandbox.runtimeId} terminated before egress was revoked`);
  }
  return problems;
}

/** (4) The host called publish at most once per (session, generation). */
export function duplicatePublishCalls(journals: readonly CallJournal[]): string[] {
  const seen = new Map<string, number>();
  for (const journal of journals) {
    for (const call of journal.of("fences.publish")) {
      const fence = (call.input as { fence: RuntimeResourceFence }).fence;
      const key = `${fence.sessionId}#${fence.generation}`;
      seen.set(key, (seen.get(key) ?? 0) + 1);
    }
  }
  return [...seen]
    .filter(([, count]) => count > 1)
    .map(([key, count]) => `publish called ${count} times for ${key}`);
}

/** (3) No fence token appears in any of the texts. */
export function leakedTokens(tokens: readonly string[], texts: readonly string[]): string[] {
  return tokens
    .filter((token) => texts.some((text) => text.includes(token)))
    .map((token) => `fence token ${token.slice(0, 4)}… leaked`);
}

/** Every fence token a journal's fence calls handed out. */
export function tokensOf(journal: CallJournal): string[] {
  const tokens = new Set<string>();
  for (const call of journal.calls) {
    const value = call.value as { fence?: { token?: unknown } } | undefined;
    if (call.port === "fences" && typeof value?.fence?.token === "string")
      tokens.add(value.fence.token);
  }
  return [...tokens];
}

function bindingOf(call: CallRecord): string | undefined {
  return (call.input as { binding?: { bindingId?: string } }).binding?.bindingId;
}

function leaseOf(call: CallRecord): ManagedSandboxLease {
  return (call.input as { lease: ManagedSandboxLease }).lease;
}
