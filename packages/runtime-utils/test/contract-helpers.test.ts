import * as contract from "@open-managed-agents/runtime-resource-contract";
import { describe, expect, it } from "vitest";
import { concatBytes, jitteredBackoffMs, shellQuote } from "../src/index.js";

describe("helpers the contract holds", () => {
  it("are the contract's single copies, not new ones", () => {
    expect(shellQuote).toBe(contract.shellQuote);
    expect(jitteredBackoffMs).toBe(contract.jitteredBackoffMs);
    expect(concatBytes).toBe(contract.concatBytes);
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
    expect(
      jitteredBackoffMs({ attempt: 3, baseMs: 100, maxMs: 500, jitter: 0.5, random: () => 0.5 }),
    ).toBe(375);
  });
});
