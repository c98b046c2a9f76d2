// The size of a Worker as `wrangler deploy` would upload it: `wrangler deploy --dry-run --outdir` in the app's
// folder, then the bytes of the bundle, raw and gzip-compressed (Cloudflare's size limit counts the latter).
// wrangler builds `./Dockerfile` even in a dry run, which needs Docker; the container classes point at the
// Dockerfile's base image instead, as `pnpm deploy:check` does. Prints `{bytes, gzipBytes}` as JSON.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { gzipSync } from "node:zlib";

/** Bundles the Worker of `appDir` with wrangler (`options.wrangler`, else the app's own, else PATH's) and measures it. */
export async function measureWorkerBundle(appDir, options = {}) {
  const config = await readFile(join(appDir, "wrangler.jsonc"), "utf8");
  const base = /^FROM\s+(\S+)/m.exec(await readFile(join(appDir, "Dockerfile"), "utf8"))?.[1];
  if (!base) throw new Error(`${appDir}/Dockerfile has no FROM line`);
  // Next to wrangler.jsonc, so `main` and the schema path resolve as they do for it.
  const measureConfig = join(appDir, `.wrangler-bundle-size-${process.pid}.jsonc`);
  const outdir = await mkdtemp(join(tmpdir(), "oma-worker-bundle-"));
  await writeFile(
    measureConfig,
    config.replace(/"image":\s*"\.\/Dockerfile"/g, `"image": "${base}"`),
  );
  try {
    const local = join(appDir, "node_modules", ".bin", "wrangler");
    const wrangler = options.wrangler ?? (existsSync(local) ? local : "wrangler");
    const result = spawnSync(
      wrangler,
      ["deploy", "--dry-run", "--config", measureConfig, "--outdir", outdir],
      {
        cwd: appDir,
        encoding: "utf8",
        env: {
          ...process.env,
          WRANGLER_SEND_METRICS: "false",
          CLOUDFLARE_CF_FETCH_ENABLED: "false",
          DO_NOT_TRACK: "1",
        },
      },
    );
    if (result.error) throw result.error;
    if (result.status !== 0)
      throw new Error(
        `wrangler deploy --dry-run exited ${result.status}:\n${result.stderr.slice(-4000)}`,
      );
    // The bundle is named after `main` (src/index.ts → index.js).
    const scripts = (await readdir(outdir)).filter((name) => name.endsWith(".js"));
    if (scripts.length !== 1)
      throw new Error(
        `wrangler wrote ${scripts.length} scripts to ${outdir}: ${scripts.join(", ")}`,
      );
    const bundle = await readFile(join(outdir, scripts[0]));
    const gzipBytes = gzipSync(bundle, { level: 9 }).byteLength;
    return {
      bytes: bundle.byteLength,
      gzipBytes,
      warnings: warningsOf(`${result.stdout}\n${result.stderr}`),
    };
  } finally {
    await rm(measureConfig, { force: true });
    await rm(outdir, { recursive: true, force: true });
  }
}

/** The `▲ [WARNING]` headlines wrangler's esbuild printed. */
function warningsOf(output) {
  const plain = output.replace(/\u001b\[[0-9;]*m/g, "");
  return plain
    .split("\n")
    .filter((line) => line.includes("[WARNING]"))
    .map((line) => line.trim());
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.stdout.write(
    `${JSON.stringify(await measureWorkerBundle(resolve(process.argv[2] ?? ".")))}\n`,
  );
}
