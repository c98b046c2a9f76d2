import { createManagedRuntimeOrphanReconciler } from "@open-managed-agents/managed-runtime-host";
import {
  type ManagedSandboxLease,
  type ManagedSandboxPort,
  type TerminationReason,
  isSecretBearingKey,
  parseManagedSandboxLease,
} from "@open-managed-agents/runtime-resource-contract";
import {
  check,
  checkNoOrphans,
  checkNoSecrets,
  expectSuccess,
  expectTypedError,
} from "./assertions.js";
import type { CaseContext } from "./case-context.js";
import {
  type ConformanceCaseImplementation,
  always,
  leaseInput,
  wrapDriver,
} from "./case-definition.js";
import { bind } from "./observe.js";
import { checkCompleted } from "./run-checks.js";

const GONE = ["stopped", "unknown"];

/** Checks one lease: parses, names the provider, survives a JSON round trip and carries no secret. */
function checkLease(
  lease: ManagedSandboxLease,
  provider: string,
  secrets: readonly string[],
  what: string,
): void {
  const parsed = parseManagedSandboxLease(lease);
  check(parsed.provider === provider, `${what} names provider ${parsed.provider}, not ${provider}`);
  check(
    JSON.stringify(JSON.parse(JSON.stringify(lease))) === JSON.stringify(lease),
    `${what} changes in a JSON round trip`,
  );
  checkNoSecrets(lease, secrets, what);
  for (const key of Object.keys(lease.metadata ?? {}))
    check(!isSecretBearingKey(key), `${what} has a secret-looking metadata key ${key}`);
}

/** Reaps a lease through a fresh port instance, so nothing in-process helps. */
async function freshSandbox(context: CaseContext): Promise<ManagedSandboxPort> {
  return (await context.prepare(context.profile("noop"))).resources.sandbox;
}

async function checkGone(
  sandbox: ManagedSandboxPort,
  lease: ManagedSandboxLease,
  what: string,
): Promise<void> {
  const { state } = await sandbox.inspect(lease);
  check(GONE.includes(state), `${what}: inspect reports the runtime ${state}`);
}

/** `lifecycle.lease-json-safe`. */
export const leaseCase: ConformanceCaseImplementation = {
  claimed: always,
  async verify(context) {
    const { provider } = context.subject.descriptor;
    const run = await context.run(context.profile("noop"), {
      probe: async (input) =>
        checkLease(
          input.sandbox,
          provider,
          [input.fence.token, ...context.subject.secrets],
          "the acquired lease",
        ),
    });
    checkCompleted(run, "the run");
    for (const [index, lease] of run.observations.leases.entries())
      checkLease(lease, provider, context.subject.secrets, `lease ${index}`);
  },
};

/** `lifecycle.heartbeat-lost`. */
export const heartbeatCase: ConformanceCaseImplementation = {
  claimed: always,
  async verify(context) {
    const run = await context.run(context.profile("noop"), {
      async probe(input, resources) {
        const first = await resources.sandbox.heartbeat(leaseInput(input));
        check(first.type === "alive", `heartbeat of a running runtime reports ${first.type}`);
        await resources.sandbox.reap({
          scope: input.scope,
          lease: input.sandbox,
          reason: "failed",
        });
        const second = await resources.sandbox.heartbeat(leaseInput(input));
        check(
          second.type === "lost",
          "heartbeat reports alive after the provider deleted the runtime",
        );
      },
    });
    await checkNoOrphans(context.orphans, "terminating an already deleted runtime left an orphan");
    const [lease] = run.observations.leases;
    check(lease, "the run acquired no lease");
    await checkGone(run.resources.sandbox, lease, "after reap");
  },
};

/** `lifecycle.terminate-idempotent`. */
export const terminateCase: ConformanceCaseImplementation = {
  claimed: always,
  async verify(context) {
    for (const reason of [
      "completed",
      "failed",
      "lease_lost",
    ] as const satisfies readonly TerminationReason[]) {
      await context.run(context.profile("noop"), {
        async probe(input, resources) {
          await expectSuccess(
            () => resources.sandbox.terminate({ ...leaseInput(input), reason }),
            `terminate (${reason})`,
          );
          await expectSuccess(
            () => resources.sandbox.terminate({ ...leaseInput(input), reason }),
            `a second terminate (${reason})`,
          );
          await checkGone(resources.sandbox, input.sandbox, `after terminate (${reason})`);
        },
      });
      await checkNoOrphans(
        context.orphans,
        `the host's own terminate after terminate (${reason}) failed and left an orphan`,
      );
    }
  },
};

/** `lifecycle.reap-serialized`. */
export const reapCase: ConformanceCaseImplementation = {
  claimed: always,
  async verify(context) {
    await context.run(context.profile("noop"), {
      async probe(input, resources) {
        const serialized = parseManagedSandboxLease(JSON.parse(JSON.stringify(input.sandbox)));
        const fresh = await freshSandbox(context);
        const foreign = { ...serialized, provider: `${serialized.provider}-foreign` };
        await expectTypedError(
          () => fresh.reap({ scope: input.scope, lease: foreign, reason: "failed" }),
          ["provider_mismatch"],
          "reaping a lease of another provider",
        );
        const still = await resources.sandbox.heartbeat(leaseInput(input));
        check(still.type === "alive", "reaping a foreign lease stopped this provider's runtime");
        await expectSuccess(
          () => fresh.reap({ scope: input.scope, lease: serialized, reason: "failed" }),
          "reap from a serialized lease",
        );
        await expectSuccess(
          () => fresh.reap({ scope: input.scope, lease: serialized, reason: "failed" }),
          "a second reap from the same lease",
        );
        await checkGone(fresh, serialized, "after reap from a serialized lease");
      },
    });
  },
};

/** `lifecycle.orphan-retry`. */
export const orphanCase: ConformanceCaseImplementation = {
  claimed: always,
  async verify(context) {
    let token = "";
    let attempts = 0;
    const run = await context.run(context.profile("noop"), {
      probe: async (input) => {
        token = input.fence.token;
      },
      wrapDriver: (driver) =>
        wrapDriver(driver, {
          resources: (ports) => ({
            ...ports,
            sandbox: {
              ...bind(ports.sandbox),
              async terminate(input) {
                attempts += 1;
                if (attempts === 1)
                  throw new Error("conformance: the first terminate fails on purpose");
                return ports.sandbox.terminate(input);
              },
            },
          }),
        }),
    });
    checkCompleted(run, "the run whose first terminate fails");
    const records = await context.orphans.list({ limit: 10 });
    check(
      records.length === 1,
      `expected one orphan after a failed terminate, found ${records.length}`,
    );
    const [record] = records;
    check(record, "the orphan record is missing");
    checkNoSecrets(record, [token, ...context.subject.secrets], "the orphan record");
    const fresh = await freshSandbox(context);
    const reconciler = createManagedRuntimeOrphanReconciler({
      orphans: context.orphans,
      sandbox: fresh,
      clock: { now: () => Date.now() + 86_400_000 },
    });
    const summary = await reconciler.runOnce({ limit: 10 });
    check(
      summary.reaped === 1,
      `the reconciler reaped ${summary.reaped} orphans, failed ${summary.failed}`,
    );
    check(
      (await context.orphans.list({ limit: 10 })).length === 0,
      "the orphan is still listed after it was reaped",
    );
    await checkGone(fresh, record.sandbox, "after the reconciler reaped the orphan");
  },
};

/** `lifecycle.suspend`. */
export const suspendCase: ConformanceCaseImplementation = {
  claimed: (subject) => subject.descriptor.capabilities.sandbox.suspendResume === "supported",
  async verify(context) {
    const { provider } = context.subject.descriptor;
    await context.run(context.profile("noop"), {
      async probe(input, resources) {
        const suspended = await expectSuccess(
          () => resources.sandbox.suspend({ ...leaseInput(input), signal: input.signal }),
          "suspend",
        );
        checkLease(
          suspended,
          provider,
          [input.fence.token, ...context.subject.secrets],
          "the suspended lease",
        );
        const { state } = await resources.sandbox.inspect(suspended);
        check(state !== "stopped", "suspend stopped the runtime instead of retaining it");
        await resources.sandbox.reap({ scope: input.scope, lease: suspended, reason: "completed" });
      },
    });
  },
  async refuse(context) {
    await context.run(context.profile("noop"), {
      async probe(input, resources) {
        await expectTypedError(
          () => resources.sandbox.suspend({ ...leaseInput(input), signal: input.signal }),
          ["unsupported_operation"],
          "suspend without suspendResume",
        );
        const after = await resources.sandbox.heartbeat(leaseInput(input));
        check(after.type === "alive", "a refused suspend still stopped the runtime");
      },
    });
  },
};

/** `lifecycle.fork-unsupported`. */
export const forkCase: ConformanceCaseImplementation = {
  claimed: always,
  async verify(context) {
    const { resources } = await context.prepare(context.profile("noop"));
    for (const [name, port] of Object.entries(resources)) {
      const members = port && typeof port === "object" ? Object.keys(bind(port as object)) : [];
      const fork = members.find((member) => /fork|clone/i.test(member));
      check(fork === undefined, `the ${name} port offers ${fork}, but no port may fork a sandbox`);
    }
    const row = context.subject.expectedRow;
    check(
      !row?.sandboxPortFacts.available.includes("sandbox_fork"),
      "the conformance row lists sandbox_fork as available",
    );
  },
};
