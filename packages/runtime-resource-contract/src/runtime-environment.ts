import * as z from "zod";
import { nonEmptyString } from "./json.js";

/** Where the booted artifact comes from. Managed presets always name one; there is no implicit SDK default. */
export type RuntimeEnvironmentArtifact =
  | { readonly type: "preinstalled"; readonly description: string }
  | { readonly type: "image"; readonly reference: string }
  | { readonly type: "template"; readonly templateId: string }
  | { readonly type: "snapshot"; readonly snapshotId: string }
  | { readonly type: "bootstrap"; readonly script: string };

/**
 * The runtime environment a driver boots. `base` is the driver's documented image; `custom` is an
 * operator-supplied artifact that must pass the same readiness probe.
 */
export interface RuntimeEnvironment {
  readonly kind: "base" | "custom";
  readonly artifact: RuntimeEnvironmentArtifact;
}

export const runtimeEnvironmentArtifactSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("preinstalled"), description: nonEmptyString }),
  z.object({ type: z.literal("image"), reference: nonEmptyString }),
  z.object({ type: z.literal("template"), templateId: nonEmptyString }),
  z.object({ type: z.literal("snapshot"), snapshotId: nonEmptyString }),
  z.object({ type: z.literal("bootstrap"), script: nonEmptyString }),
]);

/** Schema for {@link RuntimeEnvironment}. */
export const runtimeEnvironmentSchema = z.object({
  kind: z.enum(["base", "custom"]),
  artifact: runtimeEnvironmentArtifactSchema,
});
