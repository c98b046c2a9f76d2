import { join } from "node:path";
import { unstable_readConfig } from "wrangler";
import { describe, expect, it } from "vitest";
import { APP_DIR, appFile } from "./artefacts.js";

const config = unstable_readConfig({ config: join(APP_DIR, "wrangler.jsonc") });

interface Named {
  readonly name: string;
  readonly class_name: string;
}

/** Class names src/index.ts exports. */
async function exportedClasses(): Promise<string[]> {
  const source = await appFile("src/index.ts");
  return [...source.matchAll(/export \{ (\w+) \} from/g)].map((match) => match[1] ?? "");
}

describe("wrangler.jsonc, as wrangler reads it", () => {
  it("runs the Sandbox class as a container built from the Dockerfile", () => {
    expect(config.containers).toEqual([
      expect.objectContaining({
        class_name: "Sandbox",
        image: expect.stringMatching(/Dockerfile$/),
      }),
    ]);
  });

  it("prices usage at the instance type the container runs on", () => {
    expect(config.vars.CONTAINER_INSTANCE_TYPE).toBe(config.containers?.[0]?.instance_type);
  });

  it("binds every Durable Object class src/index.ts exports, each created by a SQLite migration", async () => {
    const classes = await exportedClasses();
    expect(classes.sort()).toEqual([
      "ClaimCoordinator",
      "EnvironmentRunner",
      "Sandbox",
      "WorkRunner",
    ]);
    expect(
      config.durable_objects.bindings.map((binding: Named) => binding.class_name).sort(),
    ).toEqual(classes);
    expect(
      config.migrations
        .flatMap(
          (migration: { new_sqlite_classes?: string[] }) => migration.new_sqlite_classes ?? [],
        )
        .sort(),
    ).toEqual(classes);
    // getSandbox(env.Sandbox, id), env.WORK_RUNNER, env.ENVIRONMENT_RUNNER and env.CLAIM_COORDINATOR are the names the code uses.
    expect(config.durable_objects.bindings.map((binding: Named) => binding.name).sort()).toEqual([
      "CLAIM_COORDINATOR",
      "ENVIRONMENT_RUNNER",
      "Sandbox",
      "WORK_RUNNER",
    ]);
  });

  it("binds D1 with the app's migrations directory, the R2 buckets and a cron trigger", () => {
    expect(config.d1_databases).toEqual([
      expect.objectContaining({ binding: "DB", migrations_dir: "migrations" }),
    ]);
    expect(config.r2_buckets.map((bucket: { binding: string }) => bucket.binding).sort()).toEqual([
      "BACKUP_BUCKET",
      "OUTPUTS_BUCKET",
    ]);
    expect(config.triggers.crons).toHaveLength(1);
  });

  it("declares exactly the bindings the code is typed with (WorkerBindings in src/bindings.ts)", async () => {
    const source = await appFile("src/bindings.ts");
    const body = /export interface WorkerBindings \{([\s\S]*?)\n\}/.exec(source)?.[1] ?? "";
    const typed = [...body.matchAll(/readonly (\w+):/g)].map((match) => match[1] ?? "");
    const declared = [
      ...config.durable_objects.bindings.map((binding: Named) => binding.name),
      ...config.d1_databases.map((database: { binding: string }) => database.binding),
      ...config.r2_buckets.map((bucket: { binding: string }) => bucket.binding),
    ];
    expect(typed.sort()).toEqual(declared.sort());
  });

  it("runs locally without Docker and keeps the API token out of the file", async () => {
    expect(config.dev.enable_containers).toBe(false);
    expect(config.vars).not.toHaveProperty("API_TOKEN");
    expect(await appFile("wrangler.jsonc")).not.toMatch(/R2_SECRET_ACCESS_KEY"\s*:/);
  });
});
