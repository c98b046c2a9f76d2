import { timingSafeEqual, webcrypto } from "node:crypto";
import { describe, expect, it } from "vitest";
import { type TokenCrypto, bearerCredential, bearerMatches, bearerRefusal } from "../src/http.js";

const TOKEN = "0123456789abcdef0123456789abcdef";

/** Web Crypto's digest with Node's timingSafeEqual (workerd has both on `crypto.subtle`), logging each comparison's lengths. */
function loggingCrypto(): TokenCrypto & { comparisons: Array<[number, number]> } {
  const log: Array<[number, number]> = [];
  const compare = (a: ArrayBuffer, b: ArrayBuffer): boolean => (
    log.push([a.byteLength, b.byteLength]), timingSafeEqual(Buffer.from(a), Buffer.from(b))
  );
  return {
    comparisons: log,
    digest: (algorithm, data) => webcrypto.subtle.digest(algorithm, data),
    timingSafeEqual: compare,
  };
}

describe("bearer checks", () => {
  it("reads the token of a Bearer header in any case", () => {
    expect(bearerCredential(`Bearer ${TOKEN}`)).toBe(TOKEN);
    expect(bearerCredential(`bearer   ${TOKEN} `)).toBe(TOKEN);
    for (const header of [
      null,
      "",
      `Basic ${TOKEN}`,
      TOKEN,
      "Bearer ",
      `Bearer ${TOKEN} extra`,
      "Bearer tök",
    ])
      expect(bearerCredential(header), String(header)).toBeNull();
  });

  it("accepts only the exact token, comparing two 32-byte digests on every path", async () => {
    const crypto = loggingCrypto();
    const headers = [
      null,
      "Basic x",
      `Bearer ${TOKEN}`,
      "Bearer a",
      `Bearer ${"z".repeat(4_096)}`,
      `Bearer ${TOKEN.slice(0, 16)}`,
    ];
    const results = [];
    for (const header of headers) results.push(await bearerMatches(header, TOKEN, crypto));
    expect(results).toEqual([false, false, true, false, false, false]);
    expect(crypto.comparisons).toEqual(headers.map(() => [32, 32]));
  });

  it("names why a header is refused", async () => {
    const crypto = loggingCrypto();
    expect(await bearerRefusal(null, TOKEN, crypto)).toBe("missing");
    expect(await bearerRefusal(`Basic ${TOKEN}`, TOKEN, crypto)).toBe("not a Bearer credential");
    expect(await bearerRefusal("Bearer wrong-token", TOKEN, crypto)).toBe("wrong token");
    expect(await bearerRefusal(`Bearer ${TOKEN}`, TOKEN, crypto)).toBeNull();
  });
});
