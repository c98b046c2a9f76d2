import { SELF } from "cloudflare:test";
import type { CostReport } from "@open-managed-agents/cost-attribution";
import { describe, expect, it } from "vitest";
import {
  ORIGIN,
  call,
  newSessionId,
  shellProfile,
  startWork,
  testEnv,
  waitForEnd,
} from "../support/api.js";

const today = () => new Date().toISOString().slice(0, 10);

interface UsageRow {
  readonly provider: string;
  readonly kind: string;
  readonly value: number;
  readonly session_id: string;
  readonly work_id: string;
  readonly instance_type: string | null;
  readonly stopped_day: string;
}

describe("usage in D1 and the cost report on the operator API", () => {
  it("records sandbox_active_seconds for each work item's container and prices it at Cloudflare rates", async () => {
    const sessionId = newSessionId();
    await startWork(sessionId, { workId: "billed", profile: shellProfile("sleep 1.2") });
    expect((await waitForEnd(sessionId, "billed")).status).toBe("completed");

    const { results } = await testEnv.DB.prepare(
      "SELECT provider, kind, value, session_id, work_id, instance_type, stopped_day FROM usage_records WHERE session_id = ?",
    )
      .bind(sessionId)
      .all<UsageRow>();
    expect(results).toHaveLength(1);
    const [row] = results;
    expect(row).toMatchObject({
      provider: "cloudflare",
      kind: "sandbox_active_seconds",
      session_id: sessionId,
      work_id: "billed",
      instance_type: "standard-1",
      stopped_day: today(),
    });
    expect(row?.value).toBeGreaterThanOrEqual(1);

    const response = await call(`/v1/cost/report?from=${today()}&to=${today()}`);
    expect(response.status).toBe(200);
    const report = (await response.json()) as CostReport;
    const rows = report.rows.filter((candidate) => candidate.Tags.session === sessionId);
    expect(rows.map((candidate) => candidate.SkuId)).toEqual([
      "containers-memory",
      "containers-disk",
      "containers-cpu",
    ]);
    const seconds = row?.value ?? 0;
    // standard-1: 4 GiB × $0.0000025 + 8 GB × $0.00000007 + 0.5 vCPU × $0.00002 = $0.00002056 per second.
    const perSecond = ["0.00001", "0.00000056", "0.00001"];
    rows.forEach((candidate, index) => {
      expect(candidate).toMatchObject({
        BillingCurrency: "USD",
        ResourceType: "standard-1",
        Tags: { tenant: "default", session: sessionId },
      });
      expect(candidate.BilledCost).toBe(scaled(perSecond[index] ?? "0", seconds));
    });
  });

  it("answers capabilities, and refuses bad ranges and unknown providers with typed errors", async () => {
    const capabilities = await call("/v1/cost/capabilities");
    expect(capabilities.status).toBe(200);
    expect(await capabilities.json()).toMatchObject({
      provider: "cloudflare",
      usageKinds: ["sandbox_active_seconds"],
      cpu: "provisioned_upper_bound",
    });
    const cases: [string, number, string][] = [
      ["/v1/cost/report?from=2026-11-05&to=2026-11-01", 400, "invalid_request"],
      ["/v1/cost/report?from=2026-11-01", 400, "invalid_request"],
      ["/v1/cost/report?from=yesterday&to=2026-11-01", 400, "invalid_request"],
      [
        "/v1/cost/report?provider=vercel&from=2026-11-01&to=2026-11-01",
        422,
        "capability_unsupported",
      ],
    ];
    for (const [path, status, code] of cases) {
      const response = await call(path);
      expect(response.status, path).toBe(status);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe(code);
    }
    expect(
      (await call("/v1/cost/report?from=2026-11-01&to=2026-11-01", { method: "POST" })).status,
    ).toBe(405);
  });

  it("is bearer-protected like the rest of the API", async () => {
    const response = await SELF.fetch(`${ORIGIN}/v1/cost/report?from=${today()}&to=${today()}`);
    expect(response.status).toBe(401);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
      "unauthorized",
    );
  });
});

/** `perSecond × seconds` as an exact decimal string, by integer arithmetic on the digits. */
function scaled(perSecond: string, seconds: number): string {
  const [whole = "0", fraction = ""] = perSecond.split(".");
  const digits = BigInt(whole + fraction) * BigInt(seconds);
  const text = digits.toString().padStart(fraction.length + 1, "0");
  const head = text.slice(0, text.length - fraction.length);
  const tail = text.slice(text.length - fraction.length).replace(/0+$/, "");
  return tail ? `${head}.${tail}` : head;
}
