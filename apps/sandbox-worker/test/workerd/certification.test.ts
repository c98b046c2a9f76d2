import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import {
  CONFORMANCE_CASES,
  type ConformanceReport,
} from "@open-managed-agents/managed-runtime-conformance";
import { describe, expect, it } from "vitest";
import worker from "../../src/index.js";
import { ORIGIN, TOKEN, call, testEnv } from "../support/api.js";

const PATH = "/v1/certification/conformance";
/** The Worker as the certification build deploys it: same bindings, `CERTIFICATION=true`. */
const certificationEnv = { ...testEnv, CERTIFICATION: "true" };

/** A request to the certification build through the Worker's real fetch entrypoint. */
async function certify(init: RequestInit & { token?: string | null } = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (init.token !== null) headers.set("authorization", `Bearer ${init.token ?? TOKEN}`);
  const ctx = createExecutionContext();
  const response = await worker.fetch(
    new Request(`${ORIGIN}${PATH}`, {
      method: init.method ?? "POST",
      headers,
      ...(init.body === undefined ? {} : { body: init.body }),
    }),
    certificationEnv,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return response;
}

describe("the certification build's conformance route", () => {
  it("does not exist outside a certification build", async () => {
    const response = await call(PATH, { method: "POST", body: "{}" });
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ error: { code: "not_found" } });
  });

  it("needs the bearer token and refuses a bad request with a typed error", async () => {
    expect((await certify({ token: null, body: "{}" })).status).toBe(401);
    expect((await certify({ token: "wrong-token-0123456789", body: "{}" })).status).toBe(401);
    const unknownCase = await certify({ body: JSON.stringify({ cases: ["no.such-case"] }) });
    expect(unknownCase.status).toBe(400);
    expect(await unknownCase.json()).toMatchObject({ error: { code: "invalid_request" } });
    for (const body of [
      "{not json",
      JSON.stringify({ cases: [], extra: 1 }),
      "x".repeat(17 * 1024),
    ]) {
      const refused = await certify({ body });
      expect([400, 413]).toContain(refused.status);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toMatch(
        /^(invalid_request|limit_exceeded)$/,
      );
    }
    expect((await certify({ method: "GET" })).status).toBe(405);
  });

  it("runs the whole conformance suite in the Worker against its own driver and the real container runtime", async () => {
    const response = await certify({ body: "{}" });
    expect(response.status).toBe(200);
    const report = (await response.json()) as ConformanceReport;
    expect(report).toMatchObject({ provider: "cloudflare", placement: "in_process" });
    expect(report.cases.map((entry) => [entry.id, entry.result, entry.error?.message])).toEqual(
      CONFORMANCE_CASES.map((entry) => [entry.id, "pass", undefined]),
    );
    // This Worker's Sandbox class is the SDK's own and it passes no credential vault: egress fails closed.
    expect(report.cases.find((entry) => entry.id === "admission.credential-egress")).toMatchObject({
      claimed: false,
      verified: "fail-closed",
    });
    expect(report.passed).toBe(true);
  }, 600_000);

  it("runs only the cases asked for and reports the rest as not run", async () => {
    const cases = ["admission.descriptor", "lifecycle.lease-json-safe"];
    const report = (await (
      await certify({ body: JSON.stringify({ cases }) })
    ).json()) as ConformanceReport;
    expect(
      report.cases.filter((entry) => entry.result === "pass").map((entry) => entry.id),
    ).toEqual(cases);
    expect(
      report.cases
        .filter((entry) => !cases.includes(entry.id))
        .every((entry) => entry.result === "not-run"),
    ).toBe(true);
    expect(report.passed).toBe(true);
  }, 300_000);
});
