import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { sha256Hex, toHex } from "../src/index.js";
import { sha256HexSync } from "../src/node.js";

const nodeHex = (data: string | Uint8Array) => createHash("sha256").update(data).digest("hex");

describe("sha256Hex", () => {
  it("hashes UTF-8 text and bytes like node:crypto", async () => {
    for (const input of ["", "abc", "é ☃ \u{1f600}", Uint8Array.of(0, 255, 7)]) {
      expect(await sha256Hex(input)).toBe(nodeHex(input));
      expect(sha256HexSync(input)).toBe(nodeHex(input));
    }
    expect(await sha256Hex("abc")).toBe(
      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    );
  });

  it("writes hex with two lowercase digits per byte", () => {
    expect(toHex(Uint8Array.of(0, 10, 255))).toBe("000aff");
    expect(toHex(Uint8Array.of(1, 2).buffer)).toBe("0102");
  });
});
