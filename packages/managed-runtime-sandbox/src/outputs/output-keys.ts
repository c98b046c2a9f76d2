import {
  InvalidConfigError,
  type RuntimeResourceScope,
} from "@open-managed-agents/runtime-resource-contract";

/** Why `prefix` is not a usable key prefix, or null when it is. */
export function keyPrefixProblem(prefix: string): string | null {
  if (prefix === "") return "must not be empty";
  if (prefix.startsWith("/") || prefix.endsWith("/")) return "must not start or end with /";
  if (prefix.split("/").some((segment) => segment === "" || segment === "." || segment === "..")) {
    return "must not contain an empty, . or .. segment";
  }
  return null;
}

/** The scope's key prefix; a per-scope function returning a bad prefix throws `invalid_config`. */
export function resolveKeyPrefix(
  keyPrefix: string | ((scope: RuntimeResourceScope) => string),
  scope: RuntimeResourceScope,
): string {
  const prefix = typeof keyPrefix === "string" ? keyPrefix : keyPrefix(scope);
  const problem = typeof prefix === "string" ? keyPrefixProblem(prefix) : "must be a string";
  if (problem) {
    throw new InvalidConfigError({
      message: `outputs.keyPrefix for the scope ${problem}`,
      context: { field: "outputs.keyPrefix" },
    });
  }
  return prefix;
}

/** Key of a content-addressed output blob. */
export const outputBlobKey = (prefix: string, hex: string): string => `${prefix}/blobs/${hex}`;

/** Key of a content-addressed output manifest. */
export const outputManifestKey = (prefix: string, hex: string): string =>
  `${prefix}/manifests/${hex}.json`;
