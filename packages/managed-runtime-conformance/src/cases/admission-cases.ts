import {
  MANAGED_RUNTIME_PROVIDER_PLACEMENTS,
  type ManagedRuntimeProviderDriverDescriptor,
  type OutputStrategy,
  type RuntimeResourceScope,
  type WorkspaceStrategy,
} from "@open-managed-agents/runtime-resource-contract";
import { deriveConformanceRow } from "../catalog/derive-conformance-row.js";
import { check, checkNoSecrets, expectSuccess, expectTypedError } from "./assertions.js";
import type { CaseContext } from "./case-context.js";
import { type ConformanceCaseImplementation, always, wrapDriver } from "./case-definition.js";
import { bind } from "./observe.js";
import { checkCompleted } from "./run-checks.js";

const WORKSPACE_STRATEGIES: readonly WorkspaceStrategy[] = [
  "durable_mount",
  "checkpoint_restore",
  "retained_runtime",
  "ephemeral",
];
const OUTPUT_STRATEGIES: readonly OutputStrategy[] = [
  "durable_mount",
  "watch_and_upload",
  "final_collect",
];
const REFUSALS = ["capability_unsupported", "capability_drift"] as const;

/** `admission.descriptor`: stable descriptor, the AMA worker lane, and `create` refusing unlisted placements. */
export const descriptorCase: ConformanceCaseImplementation = {
  claimed: always,
  async verify(context) {
    const { subject } = context;
    const again = subject.driver.descriptor();
    check(
      JSON.stringify(again) === JSON.stringify(subject.descriptor),
      "descriptor() returns a different value on a second call",
    );
    check(
      subject.descriptor.capabilities.harness.drivers.includes("ama_worker"),
      "the descriptor does not list the ama_worker lane every managed runtime runs",
    );
    const profile = context.profile("noop");
    const plan = (
      await expectSuccess(() => context.prepare(profile), "admitting the baseline profile")
    ).plan;
    for (const placement of MANAGED_RUNTIME_PROVIDER_PLACEMENTS.filter(
      (entry) => !subject.descriptor.placements.includes(entry),
    )) {
      await expectTypedError(
        () =>
          subject.driver.create({
            environmentId: "conformance-environment",
            placement,
            profile,
            plan,
            providerConfig: subject.providerConfig,
          }),
        ["capability_unsupported"],
        `create() with the unlisted placement ${placement}`,
      );
    }
  },
};

/** `admission.live-ports`: each advertised strategy is admitted, and the live ports equal the descriptor. */
export const livePortsCase: ConformanceCaseImplementation = {
  claimed: always,
  async verify(context) {
    const { descriptor } = context.subject;
    for (const strategy of descriptor.capabilities.workspace.strategies) {
      const profile = context.profile("noop", {
        workspace: { requirement: "ephemeral", preferredStrategies: [strategy] },
      });
      const { plan } = await expectSuccess(
        () => context.prepare(profile),
        `admitting the advertised workspace strategy ${strategy}`,
      );
      check(
        plan.workspaceStrategy === strategy,
        `the plan for workspace strategy ${strategy} chose ${plan.workspaceStrategy}`,
      );
    }
    for (const { strategy } of descriptor.capabilities.outputs.strategies) {
      const profile = context.profile("noop", {
        outputs: { requirement: "best_effort", preferredStrategies: [strategy] },
      });
      const { plan } = await expectSuccess(
        () => context.prepare(profile),
        `admitting the advertised output strategy ${strategy}`,
      );
      check(
        plan.outputStrategy === strategy,
        `the plan for output strategy ${strategy} chose ${plan.outputStrategy ?? "no outputs"}`,
      );
    }
    const { resources } = await expectSuccess(
      () => context.prepare(context.profile("noop")),
      "admitting the baseline profile",
    );
    await expectSuccess(
      () =>
        deriveConformanceRow({
          descriptor,
          resources,
          sandboxPortFacts: { available: [], unavailable: [] },
        }),
      "comparing the descriptor with the live ports",
    );
  },
};

/** `admission.drift`: advertising a strategy the live ports lack is refused by the registry. */
export const driftCase: ConformanceCaseImplementation = {
  claimed: always,
  async verify(context) {
    const { capabilities } = context.subject.descriptor;
    const workspace = WORKSPACE_STRATEGIES.find(
      (strategy) => !capabilities.workspace.strategies.includes(strategy),
    );
    if (workspace) {
      await expectDriftRefused(
        context,
        `workspace strategy ${workspace}`,
        (descriptor) => ({
          ...descriptor,
          capabilities: {
            ...descriptor.capabilities,
            workspace: { strategies: [workspace, ...descriptor.capabilities.workspace.strategies] },
          },
        }),
        { workspace: { requirement: "ephemeral", preferredStrategies: [workspace] } },
      );
    }
    const output = OUTPUT_STRATEGIES.find(
      (strategy) => !capabilities.outputs.strategies.some((entry) => entry.strategy === strategy),
    );
    if (output) {
      await expectDriftRefused(
        context,
        `output strategy ${output}`,
        (descriptor) => ({
          ...descriptor,
          capabilities: {
            ...descriptor.capabilities,
            outputs: {
              strategies: [
                { strategy: output, durability: "durable" },
                ...descriptor.capabilities.outputs.strategies,
              ],
            },
          },
        }),
        { outputs: { requirement: "best_effort", preferredStrategies: [output] } },
      );
    }
    check(
      workspace !== undefined || output !== undefined,
      "no unadvertised workspace or output strategy is left to test drift with",
    );
  },
};

async function expectDriftRefused(
  context: CaseContext,
  what: string,
  advertise: (
    descriptor: ManagedRuntimeProviderDriverDescriptor,
  ) => ManagedRuntimeProviderDriverDescriptor,
  overrides: Parameters<CaseContext["profile"]>[1],
): Promise<void> {
  await expectTypedError(
    () =>
      context.prepare(context.profile("noop", overrides), {
        wrapDriver: (driver) => wrapDriver(driver, { descriptor: advertise }),
      }),
    REFUSALS,
    `admitting a descriptor that advertises the missing ${what}`,
  );
}

/** `admission.credential-egress`: required egress needs an enforced, present port. */
export const credentialEgressCase: ConformanceCaseImplementation = {
  claimed: (subject) => subject.descriptor.credentialEgress.enforcement === "enforced",
  async verify(context) {
    const profile = context.profile("noop", { credentialEgress: { requirement: "required" } });
    const { resources } = await expectSuccess(
      () => context.prepare(profile),
      "admitting a profile that requires credential egress",
    );
    check(
      resources.credentialEgress,
      "create() returned no credential-egress port although enforcement is advertised",
    );
    const live = await resources.credentialEgress.capabilities(context.scope());
    check(
      live.enforcement === "enforced",
      `the live credential-egress port reports ${live.enforcement}, not enforced`,
    );
    const run = await context.run(profile);
    checkCompleted(run, "a run that requires credential egress");
    const { observations } = run;
    check(
      observations.egressBindingIds.length > 0,
      "the run prepared no credential-egress binding",
    );
    checkNoSecrets(
      [
        observations.leases,
        observations.workspaceCandidates,
        observations.manifests,
        observations.logs,
      ],
      observations.egressBindingIds,
      "the run's records",
    );
    await expectTypedError(
      () =>
        context.prepare(profile, {
          wrapDriver: (driver) =>
            wrapDriver(driver, { resources: ({ credentialEgress: _dropped, ...rest }) => rest }),
        }),
      REFUSALS,
      "admitting required egress when create() returns no egress port",
    );
    await expectTypedError(
      () =>
        context.prepare(profile, {
          wrapDriver: (driver) =>
            wrapDriver(driver, {
              resources: (ports) => {
                const egress = ports.credentialEgress;
                if (!egress) return ports;
                const advisory = {
                  ...bind(egress),
                  capabilities: async (scope: RuntimeResourceScope) => ({
                    ...(await egress.capabilities(scope)),
                    enforcement: "advisory" as const,
                  }),
                };
                return { ...ports, credentialEgress: advisory };
              },
            }),
        }),
      REFUSALS,
      "admitting required egress when the live port is only advisory",
    );
  },
  async refuse(context) {
    await expectTypedError(
      () =>
        context.prepare(context.profile("noop", { credentialEgress: { requirement: "required" } })),
      ["capability_unsupported"],
      "admitting required egress without advertised enforcement",
    );
    const { resources } = await expectSuccess(
      () => context.prepare(context.profile("noop")),
      "admitting the baseline profile",
    );
    if (resources.credentialEgress) {
      const live = await resources.credentialEgress.capabilities(context.scope());
      check(
        live.enforcement === context.subject.descriptor.credentialEgress.enforcement,
        `the live credential-egress port reports ${live.enforcement} but the descriptor advertises ${context.subject.descriptor.credentialEgress.enforcement}`,
      );
    }
  },
};

/** `admission.runtime-checkpoint`: a required runtime checkpoint needs the port. */
export const runtimeCheckpointCase: ConformanceCaseImplementation = {
  claimed: (subject) => subject.descriptor.capabilities.sandbox.runtimeCheckpoints.length > 0,
  async verify(context) {
    const profile = context.profile("noop", { runtimeCheckpoint: "required" });
    const { plan, resources } = await expectSuccess(
      () => context.prepare(profile),
      "admitting a profile that requires a runtime checkpoint",
    );
    check(
      plan.runtimeCheckpoint !== null,
      "the admitted plan takes no runtime checkpoint although one is required",
    );
    check(resources.runtimeCheckpoint, "create() returned no runtime-checkpoint port");
    const run = await context.run(profile);
    checkCompleted(run, "a run that requires a runtime checkpoint");
    const publication = await context.publication(run.scope);
    check(
      publication?.runtimeCheckpoint?.provider === context.subject.descriptor.provider,
      "the publication holds no runtime checkpoint of this provider",
    );
    await expectTypedError(
      () =>
        context.prepare(profile, {
          wrapDriver: (driver) =>
            wrapDriver(driver, { resources: ({ runtimeCheckpoint: _dropped, ...rest }) => rest }),
        }),
      REFUSALS,
      "admitting a required runtime checkpoint when create() returns no runtime-checkpoint port",
    );
  },
  async refuse(context) {
    await expectTypedError(
      () => context.prepare(context.profile("noop", { runtimeCheckpoint: "required" })),
      ["capability_unsupported"],
      "admitting a required runtime checkpoint without advertised checkpoint kinds",
    );
  },
};

/** `admission.supervised-lane`: the supervised lane needs a supervised harness or a transport. */
export const supervisedLaneCase: ConformanceCaseImplementation = {
  claimed: (subject) =>
    subject.descriptor.capabilities.harness.drivers.includes("openma_supervised"),
  async verify(context) {
    const profile = context.profile("supervisor", { supervised: true });
    const { plan } = await expectSuccess(
      () => context.prepare(profile),
      "admitting the supervised lane",
    );
    check(
      plan.driver === "openma_supervised",
      `the supervised profile was planned as ${plan.driver}`,
    );
    await expectTypedError(
      () =>
        context.prepare(profile, {
          wrapDriver: (driver) =>
            wrapDriver(driver, {
              resources: ({ supervisorTransport: _dropped, ...rest }) => ({
                ...rest,
                harnessDriver: {
                  run: (input) => rest.harnessDriver.run(input),
                  driverCapabilities: async (scope) => ({
                    drivers: (await rest.harnessDriver.driverCapabilities(scope)).drivers.filter(
                      (lane) => lane !== "openma_supervised",
                    ),
                  }),
                },
              }),
            }),
        }),
      REFUSALS,
      "admitting the supervised lane with neither a supervised harness nor a supervisor transport",
    );
  },
  async refuse(context) {
    await expectTypedError(
      () => context.prepare(context.profile("supervisor", { supervised: true })),
      ["capability_unsupported"],
      "admitting the supervised lane the descriptor does not advertise",
    );
  },
};
