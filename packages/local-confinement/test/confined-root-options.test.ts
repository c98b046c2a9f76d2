import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it } from "vitest";
import { DEFAULT_CONFINEMENT_LIMITS } from "../src/bubblewrap-args.js";
import {
  type ConfinedRootOptions,
  parseConfinedRootOptions,
} from "../src/confined-root-options.js";
import type { EgressHttpHandler, EgressHttpsInterception } from "../src/egress-proxy.js";

const base = { tree: "/srv/tree", mounts: { "/workspace": "/srv/ws" } } as const;
const handler: EgressHttpHandler = (_request, response) => response.end();
const https: EgressHttpsInterception = {
  authority: {
    certificatePem: "-----BEGIN CERTIFICATE-----",
    secureContextFor: () => {
      throw new Error("unused");
    },
  },
  intercepts: () => true,
};

function refusal(options: unknown): ManagedRuntimeError {
  try {
    parseConfinedRootOptions(options as ConfinedRootOptions);
  } catch (error) {
    if (error instanceof ManagedRuntimeError) return error;
    throw error;
  }
  throw new Error("the options were accepted");
}

describe("confined root options", () => {
  it("fill in the defaults: the host network, the default limits, host name sandbox, no egress", () => {
    const parsed = parseConfinedRootOptions({ ...base, limits: { maxCpus: 1.5 } });
    expect(parsed.network).toBe("shared");
    expect(parsed.hostname).toBe("sandbox");
    expect(parsed.limits).toEqual({ ...DEFAULT_CONFINEMENT_LIMITS, maxCpus: 1.5 });
    expect(parsed.egressPolicy).toBeUndefined();
  });

  it("resolve the egress policy, keeping the caller's handler and interception as they are", () => {
    const allowList = parseConfinedRootOptions({
      ...base,
      network: "none",
      egressAllowList: ["example.com"],
    });
    expect(allowList.egressPolicy).toEqual(["example.com"]);
    const handled = parseConfinedRootOptions({
      ...base,
      network: "none",
      egressHandler: handler,
      egressHttps: https,
    });
    expect(handled.egressPolicy).toEqual({ handleHttp: handler, https });
    expect((handled.egressPolicy as { https: unknown }).https).toBe(https);
  });

  it.each([
    [{ ...base, limits: { maxCpus: 0 } }, "limits.maxCpus"],
    [
      { ...base, limits: { maxContainerMemoryBytes: Number.POSITIVE_INFINITY } },
      "limits.maxContainerMemoryBytes",
    ],
    [{ ...base, limits: { maxProcesses: 1.5 } }, "limits.maxProcesses"],
    [{ ...base, limits: { maxThreads: 4 } }, "limits"],
    [{ ...base, tree: "" }, "tree"],
    [{ ...base, network: "host" }, "network"],
    [{ ...base, hostName: "box" }, "(root)"],
    [
      { ...base, network: "none", egressAllowList: ["a.example"], egressHandler: handler },
      "egressHandler",
    ],
    [{ ...base, network: "none", egressHttps: https }, "egressHttps"],
    [
      { ...base, network: "none", egressHandler: handler, egressHttps: { intercepts: () => true } },
      "egressHttps",
    ],
    [{ ...base, egressAllowList: ["a.example"] }, "egressAllowList"],
    [{ ...base, egressHandler: handler }, "egressHandler"],
    [{ ...base, network: "none", egressHandler: "not a function" }, "egressHandler"],
  ])("refuse %j with invalid_config at %s", (options, path) => {
    const error = refusal(options);
    expect(error.code).toBe("invalid_config");
    expect(error.context).toMatchObject({ record: "confined root options", path });
  });

  it("say why a combination is refused", () => {
    expect(refusal({ ...base, egressAllowList: ["a.example"] }).message).toContain(
      'needs network: "none"',
    );
    expect(refusal({ ...base, network: "none", egressHttps: https }).message).toContain(
      "egressHttps needs egressHandler",
    );
  });
});
