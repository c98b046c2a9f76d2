#!/usr/bin/env node
import { parseArgs } from "node:util";
import {
  InvalidConfigError,
  ManagedRuntimeError,
} from "@open-managed-agents/runtime-resource-contract";
import { formatChecks, runChecks } from "./check.js";
import { CONFIG_KEYS } from "./config/config-keys.js";
import { type ConfigSources, loadServiceConfig, loadStoreUrl } from "./config/load-config.js";
import { createServiceLogger } from "./logging/logger.js";
import { OPERATOR_USAGE, runOperatorCommand } from "./operator/operator-cli.js";
import { startService } from "./service/run-service.js";

const USAGE = `oma-environment-worker [run] [--config FILE] [--check] [options]
oma-environment-worker <operator command> [--json]

Runs a self-hosted Managed Agents environment on this machine: claims work with the environment key,
runs each item in a sandbox of the configured driver through the fenced host, and keeps each session's
workspace between turns. Every option is also an environment variable and a config-file key:

${Object.entries(CONFIG_KEYS)
  .map(
    ([name, key]) =>
      `  ${`--${key.flag}`.padEnd(26)}${key.env.padEnd(28)}${name.padEnd(20)}${key.description}`,
  )
  .join("\n")}

  --check     validate the config, prove the API, store, driver and a sandbox, print what was found, exit 0 or 1
  --config    JSON file of settings by their camelCase name (never secrets)

${OPERATOR_USAGE}`;

const OPERATOR_COMMANDS = new Set(["in-flight", "fences", "orphans", "checkpoints"]);

async function main(argv: readonly string[]): Promise<number> {
  const configFlags = Object.fromEntries(
    Object.values(CONFIG_KEYS).map((key) => [key.flag, { type: "string" as const }]),
  );
  const { values, positionals } = parseArgs({
    args: [...argv],
    options: {
      ...configFlags,
      config: { type: "string" },
      check: { type: "boolean", default: false },
      json: { type: "boolean", default: false },
      reap: { type: "boolean", default: false },
      sweep: { type: "boolean", default: false },
      help: { type: "boolean", default: false },
    },
    allowPositionals: true,
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const sources: ConfigSources = {
    flags: values,
    env: process.env,
    ...(values.config ? { configFile: values.config } : {}),
  };
  const [command = "run", ...rest] = positionals;
  if (OPERATOR_COMMANDS.has(command)) {
    let logger: ReturnType<typeof createServiceLogger> | null = null;
    const loadFull = () => loadServiceConfig(sources);
    return runOperatorCommand(
      command,
      rest,
      { reap: values.reap, sweep: values.sweep },
      {
        storeUrl: loadStoreUrl(sources),
        loadFull,
        env: process.env,
        logger: () => {
          logger ??= createServiceLogger({
            level: "warn",
            format: "auto",
            secrets: loadFull().secrets,
            env: process.env,
          });
          return logger;
        },
        json: values.json,
        out: (text) => process.stdout.write(text),
      },
    );
  }
  if (command !== "run")
    throw new InvalidConfigError({
      message: `unknown command ${command}; see --help`,
      context: { key: "command" },
    });
  const loaded = loadServiceConfig(sources);
  const logger = createServiceLogger({
    level: loaded.config.logLevel,
    format: loaded.config.logFormat,
    secrets: loaded.secrets,
    env: process.env,
  });
  if (values.check) {
    const results = await runChecks(loaded, { env: process.env, logger });
    process.stdout.write(formatChecks(results));
    logger.flush();
    return results.every((result) => result.ok) ? 0 : 1;
  }
  const service = await startService(loaded, { env: process.env, logger });
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals += 1;
    if (signals === 1) {
      logger.host.info("service.stopping", { signal, graceMs: loaded.config.shutdownGraceMs });
      service.stop();
      return;
    }
    // A second signal: end now, without waiting for running items.
    logger.host.warn("service.stopping_now", { signal });
    logger.flush();
    process.exit(130);
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  await service.done;
  logger.flush();
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    const message = ManagedRuntimeError.isInstance(error)
      ? `${error.code}: ${error.message}`
      : error instanceof Error
        ? error.message
        : String(error);
    process.stderr.write(`oma-environment-worker: ${message}\n`);
    process.exitCode =
      ManagedRuntimeError.isInstance(error) && error.code === "invalid_config" ? 2 : 1;
  },
);
