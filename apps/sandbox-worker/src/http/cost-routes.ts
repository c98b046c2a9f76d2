import {
  type CostAttributionRegistry,
  createCostAttributionRegistry,
} from "@open-managed-agents/cost-attribution";
import { createCloudflareCostAttribution } from "@open-managed-agents/cost-attribution/cloudflare";
import { CLOUDFLARE_PROVIDER } from "@open-managed-agents/managed-runtime-cloudflare";
import { InvalidRequestError } from "@open-managed-agents/runtime-resource-contract";
import type { WorkerContext } from "../config.js";
import { createD1UsageLedger } from "../usage/usage-ledger.js";
import { json } from "./responses.js";

function registryFor(context: WorkerContext): CostAttributionRegistry {
  const config = context.config();
  const ledger = createD1UsageLedger(context.bindings.DB);
  return createCostAttributionRegistry({
    ports: [createCloudflareCostAttribution({ ledger, defaultInstanceType: config.instanceType })],
  });
}

function providerOf(url: URL): string {
  const provider = url.searchParams.get("provider") ?? CLOUDFLARE_PROVIDER;
  if (provider === "")
    throw new InvalidRequestError({
      message: "provider must not be empty",
      context: { path: "provider" },
    });
  return provider;
}

/** `GET /v1/cost/capabilities?provider=cloudflare`: what the provider's cost attribution prices. */
export async function costCapabilities(context: WorkerContext, url: URL): Promise<Response> {
  return json(200, await registryFor(context).capabilities(providerOf(url)));
}

/**
 * `GET /v1/cost/report?provider=cloudflare&from=YYYY-MM-DD&to=YYYY-MM-DD`: FOCUS-shaped cost rows of the
 * usage ledger over the inclusive UTC day range, with their exact total.
 */
export async function costReport(context: WorkerContext, url: URL): Promise<Response> {
  const from = url.searchParams.get("from");
  const to = url.searchParams.get("to");
  if (from === null || to === null)
    throw new InvalidRequestError({
      message: "from and to (YYYY-MM-DD, UTC, inclusive) are required",
      context: { path: from === null ? "from" : "to" },
    });
  return json(200, await registryFor(context).report(providerOf(url), { from, to }));
}
