import { getSandbox } from "@cloudflare/sandbox";
import { resolveManagedRuntimePlan } from "@open-managed-agents/managed-runtime-host";
import type {
  RuntimeResourceFence,
  RuntimeResourceScope,
} from "@open-managed-agents/runtime-resource-contract";
import { beforeAll, describe, expect, it } from "vitest";
import { type CloudflareSandbox, createCloudflareManagedRuntimeDriver } from "../../src/index.js";
import { createCloudflareSdkSandbox } from "../../src/sdk.js";
import { createD1Vault, ensureVaultSchema } from "./d1-vault.js";
import { CREDENTIAL_EGRESS_PROFILE, TEST_RUNTIME_ENVIRONMENT, testEnv } from "./fixtures.js";

const SECRET = `oma-confined-secret-${crypto.randomUUID()}`;
const signal = new AbortController().signal;

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** The application's `createSandbox` over the confined class. */
function createConfinedSandbox(_env: unknown, runtimeId: string): CloudflareSandbox {
  return createCloudflareSdkSandbox(getSandbox(testEnv.CONFINED_SANDBOX, runtimeId));
}

/**
 * The `enforced` credential egress against a guest that tries to go around it. The container has no
 * network of its own (the local runtime's network namespace); its only way out is the proxy whose requests
 * reach this Worker's outbound handlers. The upstream is a local echo server that reports what it received.
 */
describe("enforced credential egress from a confined container", () => {
  const scope: RuntimeResourceScope = {
    workspaceId: "ws",
    environmentId: "env",
    sessionId: `confined-${crypto.randomUUID()}`,
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
    createSandbox: createConfinedSandbox,
    runtimeEnvironment: TEST_RUNTIME_ENVIRONMENT,
    credentialVault: vault,
    controlPlaneBaseUrl: "http://control.upstream.test",
  });
  const profile = CREDENTIAL_EGRESS_PROFILE;
  const plan = resolveManagedRuntimePlan(profile, driver.descriptor().capabilities);

  beforeAll(async () => {
    await ensureVaultSchema(testEnv.VAULT_DB);
    await testEnv.VAULT_DB.prepare(
      "INSERT OR REPLACE INTO egress_credentials (host, header, value) VALUES (?, 'authorization', ?)",
    )
      .bind("api.upstream.test", `Bearer ${SECRET}`)
      .run();
  });

  it("denies by default, injects for the allowed host, over HTTP and HTTPS, refuses direct connections, and the guest never holds the credential", async () => {
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
    await egress.attach({ scope, fence, binding, sandbox: lease, signal });
    const guest = createConfinedSandbox(testEnv, lease.runtimeId);
    const run = async (command: string): Promise<string> => {
      const result = await guest.exec(command, { timeoutMs: 60_000 });
      return `${result.stdout}${result.stderr}`.trim();
    };
    try {
      // Through the proxy the guest's processes get (HTTP_PROXY): the handler replaces a forged header.
      const allowed = JSON.parse(
        await run(
          "curl -sS --max-time 40 -H 'Authorization: Bearer forged' http://api.upstream.test/guest?x=1",
        ),
      ) as Record<string, unknown>;
      expect(allowed).toMatchObject({
        url: "/guest?x=1",
        authorizationSha256: await sha256Hex(`Bearer ${SECRET}`),
      });
      expect(
        await run(
          "curl -sS --max-time 40 -o /dev/null -w '%{http_code}' http://evil.example/steal",
        ),
      ).toBe("403");
      expect(
        await run(
          "curl -sS --max-time 40 -o /dev/null -w '%{http_code}' http://169.254.169.254/latest",
        ),
      ).toBe("403");
      // HTTPS (the class sets interceptHttps): the local runtime decrypts it with its CA, which only the
      // container's own /etc trusts, and the same handlers answer: injected for the allowed host, denied
      // by default, the forged header replaced.
      const tls = JSON.parse(
        await run(
          "curl -sS --max-time 40 -H 'Authorization: Bearer forged' https://api.upstream.test/tls?y=2",
        ),
      ) as { url: string; authorizationSha256: string; headers: Record<string, string> };
      expect(tls).toMatchObject({
        url: "/tls?y=2",
        authorizationSha256: await sha256Hex(`Bearer ${SECRET}`),
      });
      expect(tls.headers["x-original-url"]).toBe("https://api.upstream.test/tls?y=2");
      expect(
        await run(
          "curl -sS --max-time 40 -o /dev/null -w '%{http_code}' https://evil.example/steal",
        ),
      ).toBe("403");
      expect(
        await run(
          "curl -sS --max-time 40 -o /dev/null -w '%{http_code}' https://169.254.169.254/latest",
        ),
      ).toBe("403");
      // The trust is the container's: its CA file is a certificate only, and skipping the proxy still gets nothing.
      expect(
        await run(
          "grep -c 'PRIVATE KEY' /etc/cloudflare/certs/cloudflare-containers-ca.crt /etc/ssl/certs/ca-certificates.crt",
        ),
      ).toBe(
        "/etc/cloudflare/certs/cloudflare-containers-ca.crt:0\n/etc/ssl/certs/ca-certificates.crt:0",
      );
      expect(
        await run(
          "curl -sS --noproxy '*' --max-time 10 https://api.upstream.test/direct >/dev/null 2>&1 && echo reached || echo refused",
        ),
      ).toBe("refused");

      // A guest that ignores the proxy variables: the echo server is on the host's loopback, unreachable.
      const upstream = new URL(testEnv.UPSTREAM_URL);
      const direct = await run(
        [
          `curl -sS --noproxy '*' --max-time 10 ${upstream.origin}/direct >/dev/null 2>&1 && echo curl-reached || echo curl-refused`,
          `curl -sS --noproxy '*' --max-time 10 http://api.upstream.test/direct >/dev/null 2>&1 && echo name-reached || echo name-refused`,
          `(exec 3<>/dev/tcp/${upstream.hostname}/${upstream.port}) 2>/dev/null && echo tcp-reached || echo tcp-refused`,
          `python3 -c 'import socket; socket.create_connection(("${upstream.hostname}", ${upstream.port}), timeout=5); print("py-reached")' 2>/dev/null || echo py-refused`,
        ].join("; "),
      );
      expect(direct.split("\n")).toEqual([
        "curl-refused",
        "name-refused",
        "tcp-refused",
        "py-refused",
      ]);

      // The container holds neither the credential nor the binding id: not in its environment or files.
      const scan = await run(
        `env; grep -rl -e '${SECRET}' -e '${binding.bindingId}' /workspace /tmp /mnt/session/outputs 2>/dev/null; echo "grep=$?"`,
      );
      expect(scan).toContain("grep=1");
      expect(scan).toContain("HTTP_PROXY=");
      expect(scan).not.toContain(SECRET);
      expect(scan).not.toContain(binding.bindingId);

      // After revocation the same guest request is refused.
      await egress.revoke({ scope, fence, binding, reason: "completed" });
      expect(
        await run(
          "curl -sS --max-time 40 -o /dev/null -w '%{http_code}' http://api.upstream.test/after-revoke",
        ),
      ).toBe("403");
    } finally {
      await resources.sandbox.terminate({ scope, fence, lease, reason: "completed" });
      await egress.release({ scope, fence, binding });
    }
  });
});
