import { readFileSync, rmSync } from "node:fs";
import { AmaWorkerConfigError } from "./config.js";

/**
 * The variable naming the file the launcher staged this item's credentials in (`@open-managed-agents/sandbox`
 * stages it under the same name): read once, deleted at once, kept in this process's memory only.
 */
export const CREDENTIALS_FILE_ENV = "OMA_CREDENTIALS_FILE";

/** What the file may carry. */
const CREDENTIAL_NAMES: ReadonlySet<string> = new Set([
  "ANTHROPIC_WORK_SECRET",
  "ANTHROPIC_ENVIRONMENT_KEY",
]);

/**
 * Reads and deletes the credentials file `env` names (nothing when it names none). The file goes first,
 * whatever it holds, so no tool call the SDK runs later finds it; the values never enter `process.env`,
 * whose changes every child process would inherit in its initial environment.
 */
export function takeCredentialsFile(
  env: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  const path = env[CREDENTIALS_FILE_ENV];
  if (!path) return {};
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    throw new AmaWorkerConfigError(CREDENTIALS_FILE_ENV, "names a file that cannot be read");
  } finally {
    rmSync(path, { force: true });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new AmaWorkerConfigError(CREDENTIALS_FILE_ENV, "names a file that is not a JSON object");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new AmaWorkerConfigError(CREDENTIALS_FILE_ENV, "names a file that is not a JSON object");
  }
  const credentials: Record<string, string> = {};
  for (const [name, value] of Object.entries(parsed)) {
    if (!CREDENTIAL_NAMES.has(name) || typeof value !== "string") {
      throw new AmaWorkerConfigError(
        CREDENTIALS_FILE_ENV,
        "names a file holding something other than the item's credentials",
      );
    }
    credentials[name] = value;
  }
  return credentials;
}
