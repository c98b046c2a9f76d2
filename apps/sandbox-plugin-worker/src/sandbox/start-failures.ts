import {
  InsufficientCapacityError,
  InvalidRequestError,
  ManagedRuntimeError,
  SandboxFailedError,
} from "@open-managed-agents/runtime-resource-contract";

/**
 * How a container start fails, by the messages `@cloudflare/containers` 0.3.7 and workerd raise (the SDK
 * classifies the same substrings): Cloudflare gives no error classes, only text.
 */
const CAPACITY_SIGNATURES = [
  "there is no container instance that can be provided to this durable object",
  "there is no container instance available at this time",
  "maximum number of running container instances exceeded",
  "you are requesting too many containers per second",
];
const UNKNOWN_IMAGE_SIGNATURES = [
  "no such image",
  "no application that matches",
  "no container application assigned",
];

function messages(error: unknown): string[] {
  const found: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current !== undefined && current !== null; depth += 1) {
    found.push((current instanceof Error ? current.message : String(current)).toLowerCase());
    current = typeof current === "object" ? (current as { cause?: unknown }).cause : undefined;
  }
  return found;
}

/**
 * Maps a failed container start to the contract: no instance for the account or application →
 * `insufficient_capacity`; an image the application does not have → `invalid_request`; anything else
 * (the instance exited, never listened) → `sandbox_failed`.
 */
export function classifyStartFailure(error: unknown, image: string): ManagedRuntimeError {
  if (ManagedRuntimeError.isInstance(error)) return error;
  const texts = messages(error);
  const detail = texts[0] ?? "unknown error";
  if (texts.some((text) => CAPACITY_SIGNATURES.some((signature) => text.includes(signature)))) {
    return new InsufficientCapacityError({
      message: `Cloudflare has no container instance for this sandbox: the account or application is at its instance, memory, vCPU or disk limit (${detail})`,
      context: { phase: "start" },
      cause: error,
    });
  }
  if (
    texts.some((text) => UNKNOWN_IMAGE_SIGNATURES.some((signature) => text.includes(signature)))
  ) {
    return new InvalidRequestError({
      message: `the container application does not have image ${image} (${detail})`,
      context: { phase: "start", image },
      cause: error,
    });
  }
  return new SandboxFailedError({
    message: `the sandbox instance did not start: ${detail}`,
    context: { phase: "start" },
    cause: error,
  });
}
