import {
  CapabilityDriftError,
  CapabilityUnsupportedError,
  InvalidConfigError,
  InvalidRequestError,
  MANAGED_RUNTIME_PROVIDER_PLACEMENTS,
  ManagedRuntimeError,
  type ManagedRuntimeProviderDriverDescriptor,
  type ManagedRuntimeProviderDriverPort,
  type ManagedRuntimeResourceCapabilities,
  type ManagedRuntimeProviderResources,
  type RuntimeResourceScope,
  createError,
  managedRuntimeProviderDriverDescriptorSchema,
  managedRuntimeResourceCapabilitiesSchema,
  parseManagedRuntimeProfile,
  parseManagedRuntimeProviderDriverDescriptor,
  parseRecord,
  parseRuntimeResourceScope,
} from "@open-managed-agents/runtime-resource-contract";
import * as z from "zod";
import { portSchema, providerPortSchemas } from "../host/host-options.js";
import { assertSpecificationVersion } from "../loader/specification-version.js";
import { resolveManagedRuntimePlan } from "../plan.js";
import {
  assertEgressMatches,
  assertMemoryStoresMatch,
  assertNoDrift,
  drift,
} from "./capability-drift.js";
import { parseLive } from "./parse-live.js";
import { superviseIfAdvertised } from "./supervise-if-advertised.js";
import type {
  ManagedRuntimeProviderRegistry,
  ManagedRuntimeProviderRegistryOptions,
  PreparedManagedRuntimeProvider,
} from "./types.js";

const egressCapabilitiesSchema =
  managedRuntimeProviderDriverDescriptorSchema.shape.credentialEgress;

const optionsSchema = z.object({ drivers: z.array(portSchema(["descriptor", "create"])) });

const prepareSchema = z.object({
  provider: z.string().min(1, "must not be empty"),
  placement: z.enum(MANAGED_RUNTIME_PROVIDER_PLACEMENTS),
  providerConfig: z.record(z.string(), z.unknown()),
});

/**
 * Creates the registry. Every descriptor must name this host's contract revision, is validated with the
 * contract schema, and provider ids must be unique; each failure is `invalid_config`.
 */
export function createManagedRuntimeProviderRegistry(
  options: ManagedRuntimeProviderRegistryOptions,
): ManagedRuntimeProviderRegistry {
  parseRecord(optionsSchema, options, {
    record: "provider registry options",
    code: "invalid_config",
  });
  const entries = new Map<
    string,
    {
      readonly driver: ManagedRuntimeProviderDriverPort;
      readonly descriptor: ManagedRuntimeProviderDriverDescriptor;
    }
  >();
  options.drivers.forEach((driver, index) => {
    const raw = driver.descriptor();
    assertSpecificationVersion(raw, {
      driver: `drivers.${index}`,
      code: "invalid_config",
      context: { path: `drivers.${index}` },
    });
    const descriptor = parseManagedRuntimeProviderDriverDescriptor(raw, { code: "invalid_config" });
    if (entries.has(descriptor.provider)) {
      throw new InvalidConfigError({
        message: `provider id ${descriptor.provider} is registered twice`,
        context: { provider: descriptor.provider, path: `drivers.${index}` },
      });
    }
    entries.set(descriptor.provider, { driver, descriptor });
  });

  return {
    descriptors: () => [...entries.values()].map((entry) => entry.descriptor),

    async prepare(input): Promise<PreparedManagedRuntimeProvider> {
      const { provider, placement, providerConfig } = parseRecord(prepareSchema, input, {
        record: "prepare input",
      });
      const scope = parseRuntimeResourceScope(input.scope);
      const profile = parseManagedRuntimeProfile(input.profile);
      const entry = entries.get(provider);
      if (!entry) {
        throw new InvalidRequestError({
          message: `unknown managed-runtime provider ${provider}`,
          context: { provider, known: [...entries.keys()] },
        });
      }
      const { driver, descriptor } = entry;
      if (!descriptor.placements.includes(placement)) {
        throw new CapabilityUnsupportedError({
          message: `provider ${provider} does not implement the ${placement} placement`,
          context: {
            requirement: "placement",
            provider,
            placement,
            offered: [...descriptor.placements],
          },
        });
      }
      const plan = withProvider(provider, () =>
        resolveManagedRuntimePlan(profile, descriptor.capabilities),
      );
      const egressRequired = profile.credentialEgress?.requirement === "required";
      if (egressRequired && descriptor.credentialEgress.enforcement !== "enforced") {
        throw new CapabilityUnsupportedError({
          message: `provider ${provider} offers ${descriptor.credentialEgress.enforcement} credential egress, and the profile requires enforced`,
          context: {
            requirement: "credential_egress",
            provider,
            enforcement: descriptor.credentialEgress.enforcement,
          },
        });
      }

      const created = await withProviderAsync(provider, () =>
        driver.create({
          environmentId: scope.environmentId,
          placement,
          profile,
          plan,
          providerConfig,
        }),
      );
      for (const [name, schema] of Object.entries(providerPortSchemas)) {
        if (!schema.safeParse((created as unknown as Record<string, unknown>)?.[name]).success) {
          throw drift(provider, `resources.${name}`, "a port", "missing or incomplete");
        }
      }
      const resources = await superviseIfAdvertised(provider, descriptor, created, scope);

      const capabilities = await liveCapabilities(provider, resources, scope);
      const livePlan = resolveLivePlan(provider, profile, capabilities);
      assertNoDrift(
        provider,
        { capabilities: descriptor.capabilities, plan },
        { capabilities, plan: livePlan },
      );
      if (plan.runtimeCheckpoint !== null && !resources.runtimeCheckpoint) {
        throw drift(
          provider,
          "resources.runtimeCheckpoint",
          `${plan.runtimeCheckpoint} checkpoints`,
          "no runtime-checkpoint port",
        );
      }
      await checkLiveEgress(provider, descriptor, resources, scope, egressRequired);
      assertMemoryStoresMatch(provider, descriptor.memoryStores, resources.memoryStores);
      return { descriptor, plan, resources };
    },
  };
}

/**
 * The four live capability answers, each parsed with the contract's schema: a port that answers a shape the
 * contract does not allow drifts from its descriptor, which did parse, so it is refused as drift naming the
 * field rather than compared field by field into a raw `TypeError`.
 */
async function liveCapabilities(
  provider: string,
  resources: ManagedRuntimeProviderResources,
  scope: RuntimeResourceScope,
): Promise<ManagedRuntimeResourceCapabilities> {
  const [sandbox, workspace, outputs, harness] = await Promise.all([
    resources.sandbox.capabilities(scope),
    resources.workspace.capabilities(scope),
    resources.outputs.capabilities(scope),
    resources.harnessDriver.driverCapabilities(scope),
  ]);
  return parseLive(provider, managedRuntimeResourceCapabilitiesSchema, {
    sandbox,
    workspace,
    outputs,
    harness,
  });
}

/** The advertised plan resolved, so a live refusal is drift, not an unsupported profile. */
function resolveLivePlan(
  provider: string,
  profile: Parameters<typeof resolveManagedRuntimePlan>[0],
  capabilities: ManagedRuntimeResourceCapabilities,
) {
  try {
    return resolveManagedRuntimePlan(profile, capabilities);
  } catch (error) {
    if (!ManagedRuntimeError.hasCode(error, "capability_unsupported")) throw error;
    throw new CapabilityDriftError({
      message: `provider ${provider} drifted from its advertised capability plan: ${error.message}`,
      context: { ...error.context, provider },
      cause: error,
    });
  }
}

async function checkLiveEgress(
  provider: string,
  descriptor: ManagedRuntimeProviderDriverDescriptor,
  resources: ManagedRuntimeProviderResources,
  scope: RuntimeResourceScope,
  required: boolean,
): Promise<void> {
  const port = resources.credentialEgress;
  if (!port) {
    if (descriptor.credentialEgress.enforcement !== "unsupported") {
      throw drift(
        provider,
        "resources.credentialEgress",
        `${descriptor.credentialEgress.enforcement} egress`,
        "no credential-egress port",
      );
    }
    return;
  }
  const live = parseLive(
    provider,
    egressCapabilitiesSchema,
    await port.capabilities(scope),
    "credentialEgress",
  );
  assertEgressMatches(provider, descriptor.credentialEgress, live);
  if (required && live.enforcement !== "enforced")
    throw drift(provider, "credentialEgress.enforcement", "enforced", live.enforcement);
}

/** Awaits `call`; a typed error gains the provider id in its context, any other error becomes `internal`. */
async function withProviderAsync<T>(provider: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw annotate(provider, error);
  }
}

/** Synchronous {@link withProviderAsync}. */
function withProvider<T>(provider: string, call: () => T): T {
  try {
    return call();
  } catch (error) {
    throw annotate(provider, error);
  }
}

function annotate(provider: string, error: unknown): ManagedRuntimeError {
  if (ManagedRuntimeError.isInstance(error)) {
    if (error.context.provider === provider) return error;
    return createError(error.code, {
      message: `provider ${provider}: ${error.message}`,
      context: { ...error.context, provider },
      cause: error,
    });
  }
  return createError("internal", {
    message: `provider ${provider} failed: ${error instanceof Error ? error.message : String(error)}`,
    context: { provider },
    cause: error,
  });
}
