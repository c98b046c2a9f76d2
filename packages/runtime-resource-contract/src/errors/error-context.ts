/** A value allowed in an error's context: JSON scalars and flat arrays of them. */
export type ErrorContextValue =
  | string
  | number
  | boolean
  | null
  | readonly (string | number | boolean | null)[];

/**
 * Context keys that would carry a secret. The {@link ErrorContext} type forbids them, and the error
 * constructor drops any key that looks like one, so a fence token, API key or vault credential cannot
 * be attached to an error by accident.
 */
export type SecretBearingContextKey =
  | "token"
  | "fenceToken"
  | "apiKey"
  | "secret"
  | "secretAccessKey"
  | "accessKeyId"
  | "password"
  | "authorization"
  | "credential"
  | "credentials";

/** Safe, JSON-serializable details that travel with an error. */
export type ErrorContext = { readonly [key: string]: ErrorContextValue | undefined } & {
  readonly [K in SecretBearingContextKey]?: never;
};

const SECRET_KEY_PATTERN =
  /token|secret|password|passwd|api[-_]?key|authori[sz]ation|credential|access[-_]?key/i;

/** True when a context key name looks like it would hold a secret. */
export function isSecretBearingKey(key: string): boolean {
  return SECRET_KEY_PATTERN.test(key);
}

/** Copies a context, dropping secret-looking keys, non-JSON values and undefined entries. */
export function sanitizeErrorContext(context: unknown): Record<string, ErrorContextValue> {
  const safe: Record<string, ErrorContextValue> = {};
  if (typeof context !== "object" || context === null) return safe;
  for (const [key, value] of Object.entries(context)) {
    if (value === undefined || isSecretBearingKey(key)) continue;
    if (isScalar(value)) safe[key] = value;
    else if (Array.isArray(value) && value.every(isScalar)) safe[key] = [...value];
  }
  return safe;
}

function isScalar(value: unknown): value is string | number | boolean | null {
  return (
    value === null ||
    ["string", "boolean"].includes(typeof value) ||
    (typeof value === "number" && Number.isFinite(value))
  );
}

/**
 * Replaces every occurrence of each secret in `text` with `[redacted]`. Empty secrets are ignored.
 * Hosts run error messages through this before they are stored or logged.
 */
export function redactSecrets(
  text: string,
  secrets: readonly (string | null | undefined)[],
): string {
  let result = text;
  for (const secret of secrets) {
    if (!secret) continue;
    result = result.split(secret).join("[redacted]");
  }
  return result;
}
