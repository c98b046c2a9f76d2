import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import {
  MANAGED_RUNTIME_PROVIDER_PLACEMENTS,
  ManagedRuntimeError,
  type ManagedRuntimeProviderPlacement,
  parseRecord,
} from "@open-managed-agents/runtime-resource-contract";
import * as z from "zod";
import { CONFORMANCE_CASE_IDS, type ConformanceCaseId } from "../cases/case-catalog.js";
import { formatConformanceCatalog } from "../catalog/catalog-listing.js";
import { MANAGED_RUNTIME_PROVIDER_CONFORMANCE } from "../catalog/provider-conformance.js";
import { formatConformanceReport } from "../runner/report-format.js";
import { runManagedRuntimeConformance } from "../runner/run-conformance.js";
import { resolveDriverModule } from "./resolve-module.js";
import { parseBlobStoreFlag, withBlobStores } from "./store-options.js";

/** Where the CLI reads and writes; injectable for tests. */
export interface CliEnvironment {
  readonly cwd: string;
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** Imports the resolved module URL. @default `import()` */
  readonly importModule?: (url: string) => Promise<unknown>;
  /** Environment `s3://` store URLs read credentials from. @default process.env */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** Usage text of `oma-conformance`. */
export const CLI_USAGE = `Usage: oma-conformance --module <specifier> --provider <id> [options]
       oma-conformance --catalog [--json]

Runs the managed-runtime conformance suite against a driver package through the real registry and host.

  --module <specifier>        package or file exporting createManagedRuntimeProviderDriver
  --provider <id>             provider id the descriptor must name
  --factory-options <file>    JSON file passed to createManagedRuntimeProviderDriver
  --blob-store <option>=<url> sets a factory option that takes a BlobStore (repeatable):
                              file:///dir, s3://bucket/prefix (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
                              AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL, AWS_REGION) or memory:
  --provider-config <file>    JSON file passed to create() as providerConfig
  --placement <placement>     in_process | driver_service | provider_native (default: the first listed)
  --case <id>                 run only this case (repeatable); others are reported as not-run
  --timeout <seconds>         deadline of the whole run: the running case fails, the rest are not-run
                              (default: none beyond each case's 60 s)
  --catalog                   print the provider catalog: each row derived from a driver in this repository
                              (checked by its tests) or declared from provider documentation (unverified)
  --json                      print the report (or the catalog) as JSON
  --help                      print this text

After the cases it reaps every runtime they left running (a driver whose terminate threw) and exits.
Exit status: 0 when every case passed, 1 when a case failed, a runtime could not be reaped or the
--timeout passed, 2 for a usage or load error.`;

const jsonObjectSchema = z.record(z.string(), z.unknown());

/** Runs the CLI with `argv` (without the node and script paths) and returns the exit status. */
export async function runCli(
  argv: readonly string[],
  environment: CliEnvironment,
): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        module: { type: "string" },
        provider: { type: "string" },
        "factory-options": { type: "string" },
        "provider-config": { type: "string" },
        "blob-store": { type: "string", multiple: true },
        placement: { type: "string" },
        case: { type: "string", multiple: true },
        timeout: { type: "string" },
        catalog: { type: "boolean", default: false },
        json: { type: "boolean", default: false },
        help: { type: "boolean", default: false },
      },
      strict: true,
    }));
  } catch (error) {
    environment.stderr(
      `${error instanceof Error ? error.message : String(error)}\n\n${CLI_USAGE}\n`,
    );
    return 2;
  }
  if (values.help) {
    environment.stdout(`${CLI_USAGE}\n`);
    return 0;
  }
  if (values.catalog) {
    const rows = MANAGED_RUNTIME_PROVIDER_CONFORMANCE;
    environment.stdout(
      values.json ? `${JSON.stringify(rows, null, 2)}\n` : `${formatConformanceCatalog(rows)}\n`,
    );
    return 0;
  }
  try {
    if (!values.module || !values.provider)
      throw usageError("--module and --provider are required");
    const placement = values.placement;
    if (
      placement !== undefined &&
      !(MANAGED_RUNTIME_PROVIDER_PLACEMENTS as readonly string[]).includes(placement)
    )
      throw usageError(`unknown placement ${placement}`);
    const cases = (values.case ?? []).map((id) => {
      if (!(CONFORMANCE_CASE_IDS as readonly string[]).includes(id))
        throw usageError(`unknown case ${id}; known cases: ${CONFORMANCE_CASE_IDS.join(", ")}`);
      return id as ConformanceCaseId;
    });
    const timeoutMs = values.timeout === undefined ? undefined : parseTimeout(values.timeout);
    const storeFlags = (values["blob-store"] ?? []).map((flag) => {
      const parsed = parseBlobStoreFlag(flag);
      if (typeof parsed === "string") throw usageError(parsed);
      return parsed;
    });
    const factoryOptions = values["factory-options"]
      ? await readJsonObject(
          resolve(environment.cwd, values["factory-options"]),
          "--factory-options",
        )
      : {};
    const importModule =
      environment.importModule ?? ((url: string) => import(/* @vite-ignore */ url));
    const report = await runManagedRuntimeConformance(
      {
        name: values.module,
        loadDriver: {
          provider: values.provider,
          moduleSpecifier: values.module,
          importModule: (specifier) =>
            importModule(resolveDriverModule(specifier, environment.cwd)),
        },
        factoryOptions: await withBlobStores(
          factoryOptions,
          storeFlags,
          environment.env ?? process.env,
        ),
        providerConfig: values["provider-config"]
          ? await readJsonObject(
              resolve(environment.cwd, values["provider-config"]),
              "--provider-config",
            )
          : {},
        ...(placement ? { placement: placement as ManagedRuntimeProviderPlacement } : {}),
        ...(cases.length > 0 ? { cases } : {}),
      },
      timeoutMs === undefined ? {} : { timeoutMs },
    );
    environment.stdout(
      values.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatConformanceReport(report)}\n`,
    );
    return report.passed ? 0 : 1;
  } catch (error) {
    environment.stderr(`oma-conformance: ${describeChain(error)}\n`);
    return 2;
  }
}

async function readJsonObject(path: string, option: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw usageError(
      `${option}: cannot read ${path}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw usageError(`${option}: ${path} is not JSON`);
  }
  return parseRecord(jsonObjectSchema, parsed, {
    record: `${option} file`,
    code: "invalid_config",
  });
}

function parseTimeout(text: string): number {
  const seconds = Number(text);
  if (!/^\d+(\.\d+)?$/.test(text) || !(seconds > 0))
    throw usageError(`--timeout takes a positive number of seconds, not ${text}`);
  return Math.ceil(seconds * 1000);
}

function usageError(message: string): Error {
  return new Error(`${message}\n\n${CLI_USAGE}`);
}

/** The error and its causes, one per line, so a load failure shows why the factory threw. */
function describeChain(error: unknown): string {
  const lines: string[] = [];
  for (let current: unknown = error, depth = 0; current !== undefined && depth < 5; depth += 1) {
    if (ManagedRuntimeError.isInstance(current))
      lines.push(`${current.name} (${current.code}): ${current.message}`);
    else lines.push(current instanceof Error ? current.message : String(current));
    current = current instanceof Error ? current.cause : undefined;
  }
  return lines.join("\n  caused by ");
}
