import { describe, expect, it } from "vitest";
import { leaseHandoverFetch } from "../src/lease-handover.js";

const origin = "http://127.0.0.1:9/v1/environments/env_1/work";
const beat = (workId: string, expected: string) =>
  `${origin}/${workId}/heartbeat?expected_last_heartbeat=${encodeURIComponent(expected)}`;

/** A base `fetch` that records the URL of every call it is given. */
function recording() {
  const urls: string[] = [];
  const base = (async (input: string | URL | Request) => {
    urls.push(input instanceof Request ? input.url : String(input));
    return new Response("{}");
  }) as typeof fetch;
  return { urls, base };
}

describe("leaseHandoverFetch", () => {
  it("sends the handed-over heartbeat in place of each NO_HEARTBEAT of its item only", async () => {
    const { urls, base } = recording();
    const handed = "2026-12-07T14:00:00.123456Z";
    const wrapped = leaseHandoverFetch(base, "work_1", handed);
    await wrapped(`${origin}/work_1/ack`, { method: "POST" });
    await wrapped(beat("work_2", "NO_HEARTBEAT"), { method: "POST" });
    await wrapped(new Request(beat("work_1", "NO_HEARTBEAT"), { method: "POST" }));
    await wrapped(beat("work_1", "NO_HEARTBEAT"), { method: "POST" });
    expect(urls.map((url) => new URL(url).searchParams.get("expected_last_heartbeat"))).toEqual([
      null,
      "NO_HEARTBEAT",
      handed,
      handed,
    ]);
    expect(new URL(urls[2] as string).pathname).toBe(
      "/v1/environments/env_1/work/work_1/heartbeat",
    );
  });

  it("leaves a heartbeat that already echoes a value alone, and passes the base fetch on without a value", async () => {
    const { urls, base } = recording();
    const wrapped = leaseHandoverFetch(base, "work_1", "handed");
    await wrapped(beat("work_1", "server-value"), { method: "POST" });
    expect(new URL(urls[0] as string).searchParams.get("expected_last_heartbeat")).toBe(
      "server-value",
    );
    expect(leaseHandoverFetch(base, "work_1", undefined)).toBe(base);
    expect(leaseHandoverFetch(base, "work_1", "")).toBe(base);
  });
});
