import { Sandbox } from "@cloudflare/sandbox";
import { installCredentialEgress } from "../../src/worker.js";
import { standInCreateBackup, standInRestoreBackup } from "./backup-stand-in.js";
import { createD1Vault } from "./d1-vault.js";

export { ContainerProxy } from "@cloudflare/sandbox";

export interface TestEnv {
  readonly SANDBOX: DurableObjectNamespace<TestSandbox>;
  readonly PLAIN_SANDBOX: DurableObjectNamespace<PlainSandbox>;
  readonly CONFINED_SANDBOX: DurableObjectNamespace<ConfinedSandbox>;
  readonly VAULT_DB: D1Database;
  readonly FILES_BUCKET: R2Bucket;
  readonly BACKUP_BUCKET: R2Bucket;
  readonly WORKSPACE_BUCKET: R2Bucket;
  readonly UPSTREAM_URL: string;
  readonly WORKSPACE_BUCKET_NAME: string;
  readonly R2_ENDPOINT: string;
  readonly R2_ACCESS_KEY_ID: string;
  readonly R2_SECRET_ACCESS_KEY: string;
  readonly OMA_TEST_CONTAINER_URL: string;
  readonly OMA_TEST_CONTAINER_TOKEN: string;
  readonly OMA_TEST_CONTROL_PLANE_URL: string;
  readonly OMA_TEST_CONTROL_PLANE_ADMIN_TOKEN: string;
  readonly OMA_TEST_AMA_WORKER_BIN_DIR: string;
  readonly OMA_TEST_CONTAINER_CONFINEMENT: string;
  readonly OMA_TEST_CONTAINER_MAX_FILE_BYTES: number;
  readonly OMA_TEST_HOST_SENTINELS: {
    readonly tag: string;
    readonly etcFile: string;
    readonly rootFile: string;
    readonly hostOnlyDir: string;
    readonly secret: string;
    readonly hostPid: number;
  };
  readonly OMA_TEST_HOST_CHANGES_URL: string;
}

/**
 * The application's Sandbox class as the README shows it: no internet by default, HTTPS intercepted, the
 * credential egress handlers installed. Backups use the stand-in (see backup-stand-in.ts).
 */
export class TestSandbox extends Sandbox<TestEnv> {
  override enableInternet = false;
  override interceptHttps = true;

  override async createBackup(
    options: Parameters<Sandbox["createBackup"]>[0],
  ): Promise<{ id: string; dir: string; localBucket: true }> {
    return standInCreateBackup(this, this.env, options);
  }

  override async restoreBackup(
    backup: Parameters<Sandbox["restoreBackup"]>[0],
  ): Promise<{ success: true; dir: string; id: string }> {
    const restored = await standInRestoreBackup(this, this.env, backup);
    await this.ctx.storage.put(
      "restoreCount",
      ((await this.ctx.storage.get<number>("restoreCount")) ?? 0) + 1,
    );
    return restored;
  }

  /** How often a backup was restored into this container (observation for tests). */
  async restoreCount(): Promise<number> {
    return (await this.ctx.storage.get<number>("restoreCount")) ?? 0;
  }
}
installCredentialEgress<TestEnv>(TestSandbox, {
  vault: (env) => createD1Vault(env.VAULT_DB),
  fetch: toTestUpstream,
});

/**
 * Upstream fetch of the outbound handlers: hosts under `upstream.test`, over http or https, reach the
 * local echo server (which stands in for the internet and terminates no TLS); anything else is fetched as is.
 */
async function toTestUpstream(request: Request, env: TestEnv): Promise<Response> {
  const url = new URL(request.url);
  if (!url.hostname.endsWith(".upstream.test")) return fetch(request);
  const target = new URL(`${url.pathname}${url.search}`, env.UPSTREAM_URL);
  const headers = new Headers(request.headers);
  headers.set("x-original-url", request.url);
  return fetch(new Request(target, { method: request.method, headers, body: request.body }));
}

/**
 * The same application class, but its container is confined as on Cloudflare: with `enableInternet = false`
 * the local container runtime gives it no network except a proxy whose every request goes to this
 * Worker's outbound handlers (containers-shim.ts leaves this class to the local runtime unwrapped).
 */
export class ConfinedSandbox extends Sandbox<TestEnv> {
  override enableInternet = false;
  override interceptHttps = true;
}
installCredentialEgress<TestEnv>(ConfinedSandbox, {
  vault: (env) => createD1Vault(env.VAULT_DB),
  fetch: toTestUpstream,
});

/** The SDK's Sandbox unchanged: its backup and mount calls reach the (local) container as they are. */
export class PlainSandbox extends Sandbox<TestEnv> {}

export default {
  async fetch(): Promise<Response> {
    return new Response("managed-runtime-cloudflare test worker");
  },
};
