/**
 * Bearer auth on every route and the refusal of every request when the token secret is missing, against
 * the Worker in local workerd. (The constant-time comparison itself is covered in test/unit/auth.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, IMAGE, startHarness } from "./support/harness.js";
import { createProtocolClient } from "./support/protocol-client.js";

let harness: Harness;
let unconfigured: Harness;

beforeAll(async () => {
  [harness, unconfigured] = await Promise.all([
    startHarness(),
    startHarness({ bindings: { PLUGIN_TOKEN: undefined } }),
  ]);
});
afterAll(() => Promise.all([harness?.stop(), unconfigured?.stop()]));

const ROUTES: Array<[string, string]> = [
  ["GET", "/adapter/v1/info"],
  ["GET", "/adapter/v1/openapi.json"],
  ["GET", "/adapter/v1/sandboxes"],
  ["POST", "/adapter/v1/sandboxes"],
  ["GET", "/adapter/v1/sandboxes/guarded"],
  ["DELETE", "/adapter/v1/sandboxes/guarded"],
  ["POST", "/adapter/v1/sandboxes/guarded/exec"],
  ["GET", "/adapter/v1/sandboxes/guarded/files?path=/workspace/secret.txt"],
  ["GET", "/adapter/v1/sandboxes/guarded/ports/8080/"],
  ["POST", "/adapter/v1/sandboxes/guarded/stop"],
  ["GET", "/adapter/v1/no-such-route"],
];

async function send(
  target: Harness,
  method: string,
  path: string,
  authorization?: string,
): Promise<{ status: number; protocol: string | null; body: Record<string, unknown> }> {
  const headers: Record<string, string> = { "Differently-Installation": "auth" };
  if (authorization !== undefined) headers.Authorization = authorization;
  const response = await fetch(`${target.url}${path}`, { method, headers });
  return {
    status: response.status,
    protocol: response.headers.get("Differently-Adapter-Protocol"),
    body: (await response.json()) as Record<string, unknown>,
  };
}

describe("bearer auth", () => {
  beforeAll(async () => {
    const client = createProtocolClient({
      baseUrl: harness.url,
      token: harness.token,
      installation: "auth",
    });
    await client.create({ id: "guarded", template: { image: IMAGE } });
    await client.writeFile("guarded", "/workspace/secret.txt", "top secret");
  });

  it("refuses every route, known or not, without a token, with a wrong one or with another scheme", async () => {
    const wrongSameLength = harness.token.replace(/.$/, (last) => (last === "0" ? "1" : "0"));
    for (const [method, path] of ROUTES) {
      for (const authorization of [
        undefined,
        `Bearer ${wrongSameLength}`,
        `Bearer ${harness.token.slice(0, 10)}`,
        `Basic ${harness.token}`,
        harness.token,
      ]) {
        const answer = await send(harness, method, path, authorization);
        expect(
          answer.status,
          `${method} ${path} with ${authorization === undefined ? "no header" : authorization.split(" ")[0]}`,
        ).toBe(401);
        expect(answer.protocol).toBe("1");
        expect(answer.body).toMatchObject({ code: "unauthorized" });
        expect(JSON.stringify(answer.body)).not.toContain(harness.token);
      }
    }
  });

  it("lets the right token through, and the sandbox was untouched by the refused calls", async () => {
    const client = createProtocolClient({
      baseUrl: harness.url,
      token: harness.token,
      installation: "auth",
    });
    expect((await client.get("guarded")).state).toBe("running");
    expect(
      new TextDecoder().decode(await client.readFile("guarded", "/workspace/secret.txt")),
    ).toBe("top secret");
    expect(
      (await send(harness, "GET", "/adapter/v1/no-such-route", `Bearer ${harness.token}`)).status,
    ).toBe(404);
  });
});

describe("a Worker without its token secret", () => {
  it("refuses every request with invalid_config naming PLUGIN_TOKEN, whatever credential is sent", async () => {
    for (const [method, path] of ROUTES) {
      for (const authorization of [undefined, "Bearer anything-at-all-here", "Bearer "]) {
        const answer = await send(unconfigured, method, path, authorization);
        expect(answer.status).toBe(500);
        expect(answer.protocol).toBe("1");
        expect(answer.body).toMatchObject({
          code: "invalid_config",
          context: { field: "PLUGIN_TOKEN" },
        });
      }
    }
    expect(unconfigured.containers.containers.list()).toEqual([]);
  });
});
