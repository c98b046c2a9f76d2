import { SELF, createExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../src/index.js";
import { ORIGIN, TOKEN, call, testEnv } from "../support/api.js";

const ITEM = "/v1/sessions/s-auth/work/w-missing";

async function refusal(
  response: Response,
): Promise<{ status: number; code: string; message: string; challenge: string | null }> {
  const body = (await response.json()) as { error: { code: string; message: string } };
  return {
    status: response.status,
    code: body.error.code,
    message: body.error.message,
    challenge: response.headers.get("www-authenticate"),
  };
}

describe("bearer authentication", () => {
  it("lets the configured token through to routing", async () => {
    const response = await call(ITEM);
    expect(response.status).toBe(404);
    expect((await response.json()) as unknown).toMatchObject({ error: { code: "not_found" } });
    // The scheme name is case-insensitive.
    expect((await call(ITEM, { headers: { authorization: `bearer ${TOKEN}` } })).status).toBe(404);
  });

  it.each([
    ["a missing header", undefined, "missing Authorization header"],
    [
      "another scheme",
      `Basic ${btoa(`user:${TOKEN}`)}`,
      "Authorization must use the Bearer scheme",
    ],
    ["an empty bearer", "Bearer ", "Authorization must use the Bearer scheme"],
    ["a wrong token of the same length", `Bearer ${TOKEN.slice(0, -1)}x`, "invalid bearer token"],
    ["a prefix of the token", `Bearer ${TOKEN.slice(0, 8)}`, "invalid bearer token"],
    ["the token with a suffix", `Bearer ${TOKEN}0`, "invalid bearer token"],
  ])(
    "refuses %s with 401 and a Bearer challenge, before routing",
    async (_case, header, message) => {
      const response =
        header === undefined
          ? await SELF.fetch(`${ORIGIN}${ITEM}`)
          : await call(ITEM, { headers: { authorization: header } });
      const result = await refusal(response);
      expect(result).toEqual({
        status: 401,
        code: "unauthorized",
        message,
        challenge: expect.stringMatching(/^Bearer /),
      });
      expect(JSON.stringify(result)).not.toContain(TOKEN);
    },
  );

  it("refuses unauthenticated requests to every route, including starting work", async () => {
    const response = await call("/v1/sessions/s-auth/work", {
      method: "POST",
      headers: { authorization: "Bearer nope-nope-nope-nope" },
      body: "{}",
    });
    expect(response.status).toBe(401);
    expect(
      await testEnv.DB.prepare(
        "SELECT COUNT(*) AS count FROM work_items WHERE session_id = 's-auth'",
      ).first("count"),
    ).toBe(0);
  });

  it.each([
    ["no API_TOKEN", undefined, "API_TOKEN is not set"],
    ["an empty API_TOKEN", "", "API_TOKEN is not set"],
    ["a short API_TOKEN", "short", "API_TOKEN is shorter than 16 characters"],
  ])("refuses every request when the Worker has %s", async (_case, apiToken, message) => {
    const env = { ...testEnv, API_TOKEN: apiToken };
    for (const authorization of [`Bearer ${TOKEN}`, `Bearer ${apiToken ?? ""}`, ""]) {
      const response = await worker.fetch(
        new Request(`${ORIGIN}${ITEM}`, { headers: { authorization } }),
        env,
        createExecutionContext(),
      );
      expect(await refusal(response)).toMatchObject({
        status: 500,
        code: "invalid_config",
        message: expect.stringContaining(message),
      });
    }
  });
});
