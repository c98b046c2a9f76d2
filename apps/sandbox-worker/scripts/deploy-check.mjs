// `pnpm deploy:check`: what `wrangler deploy --dry-run` checks (config, bindings, Durable Object
// migrations, the bundle), on a machine without Docker. wrangler builds `./Dockerfile` even in a dry
// run, which needs Docker; this runs the same dry run with the container class pointing at the
// Dockerfile's base image as a registry reference (no build), and leaves the Dockerfile itself to
// test/node/image.test.ts. Writes the bundle to .wrangler/deploy-check/ and exits non-zero on any error.
// A valid dry run ends with what is still to do before a real deploy (placeholders in wrangler.jsonc,
// Docker) and what to confirm in the account (secrets, buckets, remote migrations); `--strict` exits 1
// while the first list is not empty.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, rm, writeFile } from "node:fs/promises";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { unstable_readConfig } from "wrangler";
import { deployTodo, formatDeployTodo } from "./deploy-todo.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const IMAGE_LINE = /"image":\s*"\.\/Dockerfile"/g;

const config = await readFile(join(root, "wrangler.jsonc"), "utf8");
const dockerfile = await readFile(join(root, "Dockerfile"), "utf8");
const base = /^FROM\s+(\S+)/m.exec(dockerfile)?.[1];
if (!base) throw new Error("Dockerfile has no FROM line");
const matches = config.match(IMAGE_LINE) ?? [];
if (matches.length !== 1)
  throw new Error(
    `wrangler.jsonc must build exactly one container image from ./Dockerfile; found ${matches.length}`,
  );

// Next to wrangler.jsonc, so `main`, `migrations_dir` and the schema path resolve as they do for it.
const checkConfig = join(root, ".wrangler-deploy-check.jsonc");
await writeFile(checkConfig, config.replace(IMAGE_LINE, `"image": "${base}"`));
try {
  const result = spawnSync(
    "wrangler",
    [
      "deploy",
      "--dry-run",
      "--config",
      checkConfig,
      "--outdir",
      join(root, ".wrangler", "deploy-check"),
    ],
    {
      cwd: root,
      stdio: "inherit",
      env: {
        ...process.env,
        WRANGLER_SEND_METRICS: "false",
        CLOUDFLARE_CF_FETCH_ENABLED: "false",
        DO_NOT_TRACK: "1",
      },
    },
  );
  if (result.error) throw result.error;
  if (result.status !== 0) {
    process.stderr.write(`deploy:check: wrangler deploy --dry-run exited ${result.status}\n`);
    process.exitCode = result.status ?? 1;
  } else {
    process.stdout.write(
      `deploy:check: config, bindings and bundle valid (container image: ${base} + Dockerfile layers)\n`,
    );
    const deployed = unstable_readConfig({ config: join(root, "wrangler.jsonc") });
    const left = deployTodo(deployed, {
      dockerOnPath: onPath(process.env.WRANGLER_DOCKER_BIN ?? "docker"),
    });
    process.stdout.write(formatDeployTodo(left));
    if (left.todo.length > 0 && process.argv.includes("--strict")) process.exitCode = 1;
  }
} finally {
  await rm(checkConfig, { force: true });
}

function onPath(command) {
  if (command.includes("/")) return existsSync(command);
  return (process.env.PATH ?? "")
    .split(delimiter)
    .some((dir) => dir !== "" && existsSync(join(dir, command)));
}
