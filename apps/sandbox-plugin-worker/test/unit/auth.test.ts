import { createHash, timingSafeEqual } from "node:crypto";
import { describe, expect, it } from "vitest";
import { type TokenCrypto, bearerMatches, requireBearer } from "../../src/http/auth.js";

const TOKEN = "0123456789abcdef0123456789abcdef";

/** Node's SHA-256 and timingSafeEqual behind the Web Crypto shape, recording every comparison. */
function recordingCrypto(): TokenCrypto & { comparisons: Array<[number, number]> } {
  const comparisons: Array<[number, number]> = [];
  return {
    comparisons,
    async digest(_algorithm, data) {
      const digest = createHash("sha256").update(data).digest();
      return digest.buffer.slice(digest.byteOffset, digest.byteOffset + digest.byteLength);
    },
    timingSafeEqual(a, b) {
      comparisons.push([a.byteLength, b.byteLength]);
      return timingSafeEqual(new Uint8Array(a), new Uint8Array(b));
    },
  };
}

describe("bearer check", () => {
  it("accepts only the exact token after the Bearer scheme", async () => {
    const crypto = recordingCrypto();
    expect(await bearerMatches(`Bearer ${TOKEN}`, TOKEN, crypto)).toBe(true);
    expect(await bearerMatches(`bearer ${TOKEN}`, TOKEN, crypto)).toBe(true);
    for (const header of [
      null,
      "",
      `Basic ${TOKEN}`,
      TOKEN,
      `Bearer ${TOKEN}x`,
      `Bearer ${TOKEN.slice(0, -1)}`,
      "Bearer ",
      `Bearer ${TOKEN} extra`,
    ]) {
      expect(await bearerMatches(header, TOKEN, crypto), String(header)).toBe(false);
    }
  });

  it("compares two 32-byte digests in constant time on every path, whatever the presented length", async () => {
    const crypto = recordingCrypto();
    const headers = [
      null,
      "Basic x",
      `Bearer ${TOKEN}`,
      "Bearer a",
      `Bearer ${"z".repeat(4_096)}`,
      `Bearer ${TOKEN.slice(0, 16)}`,
    ];
    for (const header of headers) await bearerMatches(header, TOKEN, crypto);
    expect(crypto.comparisons).toEqual(headers.map(() => [32, 32]));
  });

  it("throws unauthorized with the reason, never the presented or expected token", async () => {
    const crypto = recordingCrypto();
    const request = (authorization?: string): Request =>
      new Request(
        "http://plugin/",
        authorization === undefined ? {} : { headers: { Authorization: authorization } },
      );
    await expect(requireBearer(request(), TOKEN, crypto)).rejects.toMatchObject({
      code: "unauthorized",
      context: { reason: "missing" },
    });
    await expect(requireBearer(request("Bearer wrong-token"), TOKEN, crypto)).rejects.toMatchObject(
      { code: "unauthorized", context: { reason: "wrong token" } },
    );
    await expect(requireBearer(request(`Basic ${TOKEN}`), TOKEN, crypto)).rejects.toMatchObject({
      context: { reason: "not a Bearer credential" },
    });
    const error = await requireBearer(request("Bearer wrong-token"), TOKEN, crypto).catch(
      (caught: Error) => caught,
    );
    expect(String(error)).not.toContain("wrong-token");
    expect(String(error)).not.toContain(TOKEN);
    await expect(requireBearer(request(`Bearer ${TOKEN}`), TOKEN, crypto)).resolves.toBeUndefined();
  });
});
