import { describe, expect, it } from "vitest";
import type { CloudflareCredentialVault } from "../src/index.js";
import {
  type OutboundHandler,
  type OutboundInterceptingClass,
  CREDENTIAL_EGRESS_HANDLER,
  REVOKED_EGRESS_HANDLER,
  createCredentialEgressOutboundHandlers,
  denyAllOutbound,
  installCredentialEgress,
} from "../src/worker.js";

const SECRET = "ghp_secret_value_for_the_handler_test";

function vaultFor(
  decisions: Record<string, Awaited<ReturnType<CloudflareCredentialVault["resolve"]>>>,
): CloudflareCredentialVault & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    open: async () => undefined,
    revoke: async () => undefined,
    async resolve({ bindingId, url }) {
      calls.push(`${bindingId} ${url.host}`);
      if (url.host === "broken.example") throw new Error(`vault down while holding ${SECRET}`);
      return decisions[url.host] ?? { type: "deny" };
    },
  };
}

function handlersWith(vault: CloudflareCredentialVault, seen: Request[]) {
  return createCredentialEgressOutboundHandlers<Record<string, never>>({
    vault: () => vault,
    fetch: async (request) => {
      seen.push(request);
      return new Response("upstream", { status: 200 });
    },
  });
}

const context = (params: unknown) => ({ containerId: "c", className: "TestSandbox", params });
const params = { bindingId: "egr_1", controlPlaneOrigin: "https://openma.example" };

describe("credential egress outbound handlers", () => {
  it("sets vault headers over guest-chosen ones and strips proxy headers", async () => {
    const seen: Request[] = [];
    const handler = handlersWith(
      vaultFor({
        "api.github.com": { type: "forward", headers: { authorization: `Bearer ${SECRET}` } },
      }),
      seen,
    )[CREDENTIAL_EGRESS_HANDLER];
    const response = await handler?.(
      new Request("https://api.github.com/user", {
        headers: { authorization: "Bearer forged", "proxy-authorization": "x" },
      }),
      {},
      context(params),
    );
    expect(response?.status).toBe(200);
    expect(seen[0]?.headers.get("authorization")).toBe(`Bearer ${SECRET}`);
    expect(seen[0]?.headers.get("proxy-authorization")).toBeNull();
  });

  it("refuses hosts the vault denies, fails closed when the vault fails, and never leaks the vault's error", async () => {
    const seen: Request[] = [];
    const handler = handlersWith(vaultFor({}), seen)[CREDENTIAL_EGRESS_HANDLER];
    const denied = await handler?.(new Request("http://evil.example/x"), {}, context(params));
    expect(denied?.status).toBe(403);
    expect(await denied?.json()).toEqual({ error: "egress_denied", host: "evil.example" });
    const broken = await handler?.(new Request("https://broken.example/"), {}, context(params));
    expect(broken?.status).toBe(502);
    expect(await broken?.text()).not.toContain(SECRET);
    expect(seen).toHaveLength(0);
  });

  it("passes the control-plane origin through without asking the vault", async () => {
    const seen: Request[] = [];
    const vault = vaultFor({});
    const handler = handlersWith(vault, seen)[CREDENTIAL_EGRESS_HANDLER];
    const response = await handler?.(
      new Request("https://openma.example/v1/oma/mcp-proxy/s/x"),
      {},
      context(params),
    );
    expect(response?.status).toBe(200);
    expect(vault.calls).toEqual([]);
    const lookalike = await handler?.(
      new Request("https://openma.example.evil.example/"),
      {},
      context(params),
    );
    expect(lookalike?.status).toBe(403);
  });

  it("refuses everything without valid params, once revoked, and by default", async () => {
    const seen: Request[] = [];
    const handlers = handlersWith(
      vaultFor({ "api.github.com": { type: "forward", headers: {} } }),
      seen,
    );
    for (const bad of [
      undefined,
      {},
      { bindingId: "", controlPlaneOrigin: null },
      { ...params, extra: SECRET },
    ]) {
      expect(
        (
          await handlers[CREDENTIAL_EGRESS_HANDLER]?.(
            new Request("https://api.github.com/"),
            {},
            context(bad),
          )
        )?.status,
      ).toBe(403);
    }
    expect(
      (
        await handlers[REVOKED_EGRESS_HANDLER]?.(
          new Request("https://api.github.com/"),
          {},
          context(params),
        )
      )?.status,
    ).toBe(403);
    expect(
      (await denyAllOutbound(new Request("http://anything.example/"), {}, context(undefined)))
        .status,
    ).toBe(403);
    expect(seen).toHaveLength(0);
  });

  it("installs through the class's static setters", () => {
    const assigned: string[] = [];
    const target: OutboundInterceptingClass = {
      set outboundHandlers(value: unknown) {
        assigned.push(...Object.keys(value as Record<string, OutboundHandler<unknown>>));
      },
      set outbound(_value: unknown) {
        assigned.push("outbound");
      },
    };
    installCredentialEgress(target, { vault: () => vaultFor({}) });
    expect(assigned).toEqual([CREDENTIAL_EGRESS_HANDLER, REVOKED_EGRESS_HANDLER, "outbound"]);
  });
});
