import {
  CapabilityUnsupportedError,
  InvalidRequestError,
  OUTPUTS_MOUNT_PATH,
  type RuntimeResourceFence,
  type RuntimeResourceScope,
  SandboxFailedError,
  type SessionOutputBinding,
  type SessionOutputEntryCandidate,
  type SessionOutputManifestCandidate,
  type SessionOutputPort,
  parseSessionOutputEntryCandidate,
} from "@open-managed-agents/runtime-resource-contract";
import type { ManagedSandboxRuntime } from "@open-managed-agents/sandbox";
import { throwIfAborted } from "../abort.js";
import { createBoundedCache } from "../bounded-cache.js";
import { sha256Hex, sha256HexOf, stableJson } from "../digest.js";
import type { ResolvedProviderManagedRuntimeOptions } from "../options.js";
import { type RuntimeRegistry, providerFailure } from "../runtime-registry.js";
import { bytesStream, collectOutputEntries, openOutputFile } from "./output-collect.js";
import { type OutputLimits, maxBytesExceeded, maxFilesExceeded } from "./output-limits.js";
import {
  keyPrefixProblem,
  outputBlobKey,
  outputManifestKey,
  resolveKeyPrefix,
} from "./output-keys.js";
import { outputPathProblem } from "./output-listing.js";
import {
  OUTPUT_ENTRIES_METADATA_KEY,
  OUTPUT_MANIFEST_KEY_METADATA_KEY,
  encodeOutputManifest,
  outputCandidateId,
} from "./output-manifest.js";
import { putVerified } from "./verified-put.js";

/** Binding metadata key holding the scope's resolved key prefix. */
export const OUTPUT_PREFIX_METADATA_KEY = "oma.outputs.prefix";

/** Dependencies of {@link createProviderOutputsPort}. */
export interface ProviderOutputsPortDependencies<R extends ManagedSandboxRuntime> {
  readonly options: ResolvedProviderManagedRuntimeOptions<R>;
  readonly registry: RuntimeRegistry<R>;
}

/**
 * Session outputs by `final_collect`: files under `/mnt/session/outputs` become content-addressed blobs
 * (`<prefix>/blobs/<sha256>`) and a manifest (`<prefix>/manifests/<sha256>.json`). Without configured
 * outputs it advertises nothing and every operation fails closed with `capability_unsupported`.
 */
export function createProviderOutputsPort<R extends ManagedSandboxRuntime>(
  dependencies: ProviderOutputsPortDependencies<R>,
): SessionOutputPort {
  const { options, registry } = dependencies;
  const outputs = options.outputs;
  const manifests = createBoundedCache<SessionOutputManifestCandidate>(1_024);

  const configured = (strategy?: string) => {
    if (!outputs)
      throw new CapabilityUnsupportedError({
        message: `${options.providerName} is configured without session outputs`,
      });
    if (strategy !== undefined && strategy !== "final_collect") {
      throw new CapabilityUnsupportedError({
        message: `output strategy ${strategy} is not offered by ${options.providerName}`,
        context: { strategy },
      });
    }
    return outputs;
  };

  return {
    capabilities: async () => ({
      strategies: outputs ? [{ strategy: "final_collect", durability: outputs.durability }] : [],
    }),

    async prepare({ scope, fence, strategy, signal }) {
      const config = configured(strategy);
      throwIfAborted(signal, "outputs prepare");
      const prefix = resolveKeyPrefix(config.keyPrefix, scope);
      return {
        bindingId: bindingId(scope, fence),
        mountPath: OUTPUTS_MOUNT_PATH,
        metadata: { [OUTPUT_PREFIX_METADATA_KEY]: prefix },
      };
    },

    async attach({ scope, strategy, sandbox, signal }) {
      configured(strategy);
      throwIfAborted(signal, "outputs attach");
      const runtime = await registry.resolve(scope, registry.ownLease(sandbox));
      let result;
      try {
        result = await runtime.exec(`mkdir -p ${OUTPUTS_MOUNT_PATH}`, { signal });
      } catch (error) {
        throw providerFailure(error, "creating the outputs directory failed");
      }
      if (result.exitCode !== 0) {
        throw new SandboxFailedError({
          message: `creating the outputs directory failed (exit ${result.exitCode}): ${result.output}`,
          context: { exitCode: result.exitCode },
        });
      }
    },

    async collect({ scope, strategy, sandbox, signal }) {
      const config = configured(strategy);
      const runtime = await registry.resolve(scope, registry.ownLease(sandbox));
      return collectOutputEntries(runtime, config, signal);
    },

    async finalize({ scope, fence, binding, sandbox, entries, idempotencyKey, signal }) {
      const config = configured();
      const cached = manifests.get(idempotencyKey);
      if (cached) return cached;
      const prefix = bindingPrefix(binding);
      const sorted = checkEntries(entries, config);
      const runtime = await registry.resolve(scope, registry.ownLease(sandbox));
      for (const entry of sorted) {
        throwIfAborted(signal, "outputs finalize");
        const hex = sha256HexOf(entry.contentHash) as string;
        await putVerified({
          store: config.store,
          key: outputBlobKey(prefix, hex),
          expected: { hex, size: entry.size },
          contentType: entry.mediaType ?? "application/octet-stream",
          open: () => openOutputFile(runtime, entry.logicalPath),
          label: `output file ${entry.logicalPath}`,
          signal,
        });
      }
      const manifest = encodeOutputManifest({
        version: 1,
        sessionId: scope.sessionId,
        workId: scope.workId,
        generation: fence.generation,
        entries: sorted,
      });
      const key = outputManifestKey(prefix, manifest.hex);
      await putVerified({
        store: config.store,
        key,
        expected: { hex: manifest.hex, size: manifest.bytes.byteLength },
        contentType: "application/json",
        open: async () => bytesStream(manifest.bytes),
        label: "the output manifest",
        signal,
      });
      const candidate: SessionOutputManifestCandidate = {
        id: outputCandidateId(manifest.hex),
        contentHash: `sha256:${manifest.hex}`,
        entries: sorted.length,
        metadata: {
          [OUTPUT_MANIFEST_KEY_METADATA_KEY]: key,
          [OUTPUT_ENTRIES_METADATA_KEY]: sorted.length,
        },
      };
      manifests.set(idempotencyKey, candidate);
      return candidate;
    },

    // Blobs are content-addressed and shared between work items, so nothing is deleted here.
    async release() {},
    async abort() {},
  };
}

function bindingId(scope: RuntimeResourceScope, fence: RuntimeResourceFence): string {
  const identity = stableJson({ scope: { ...scope }, generation: fence.generation });
  return `provider-out-${sha256Hex(identity).slice(0, 32)}`;
}

function bindingPrefix(binding: SessionOutputBinding): string {
  const prefix = binding.metadata?.[OUTPUT_PREFIX_METADATA_KEY];
  if (typeof prefix !== "string" || keyPrefixProblem(prefix)) {
    throw new InvalidRequestError({
      message: `output binding ${binding.bindingId} carries no valid key prefix`,
    });
  }
  return prefix;
}

/** Validates entries handed to finalize and returns them sorted by path. */
function checkEntries(
  entries: readonly SessionOutputEntryCandidate[],
  limits: OutputLimits,
): SessionOutputEntryCandidate[] {
  if (entries.length > limits.maxFiles) throw maxFilesExceeded(limits.maxFiles);
  const seen = new Set<string>();
  let total = 0;
  const parsed = entries.map((input, index) => {
    const entry = parseSessionOutputEntryCandidate(input);
    const problem =
      outputPathProblem(entry.logicalPath) ??
      (sha256HexOf(entry.contentHash) ? null : "has a contentHash that is not sha256:<hex>");
    if (problem)
      throw new InvalidRequestError({
        message: `output entry ${index} ${problem}`,
        context: { index },
      });
    if (seen.has(entry.logicalPath))
      throw new InvalidRequestError({
        message: `output entry ${index} repeats a path`,
        context: { index },
      });
    seen.add(entry.logicalPath);
    total += entry.size;
    if (total > limits.maxBytes) throw maxBytesExceeded(limits.maxBytes);
    return entry;
  });
  return parsed.sort((left, right) =>
    left.logicalPath < right.logicalPath ? -1 : left.logicalPath > right.logicalPath ? 1 : 0,
  );
}
