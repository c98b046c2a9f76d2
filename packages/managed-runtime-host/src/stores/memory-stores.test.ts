import { describe, expect, it } from "vitest";
import { ManagedRuntimeError } from "@open-managed-agents/runtime-resource-contract";
import { describeFencePortSuite } from "./fence-port-suite.js";
import { createMemoryFencePort } from "./memory-fence-port.js";
import { createMemoryOrphanPort } from "./memory-orphan-port.js";
import { describeJournalPortSuite } from "./journal-port-suite.js";
import { createMemorySandboxJournal } from "./memory-sandbox-journal.js";
import { describeOrphanPortSuite } from "./orphan-port-suite.js";

describeFencePortSuite("memory", async ({ clock }) => createMemoryFencePort({ clock }));
describeOrphanPortSuite("memory", async ({ clock }) => createMemoryOrphanPort({ clock }));
describeJournalPortSuite("memory", async ({ clock }) => createMemorySandboxJournal({ clock }));

describe("memory store options", () => {
  it("refuses a clock without now() as invalid_config naming the field", () => {
    for (const create of [
      createMemoryFencePort,
      createMemoryOrphanPort,
      createMemorySandboxJournal,
    ]) {
      const error = caught(() => create({ clock: { now: 5 } as never }));
      expect(ManagedRuntimeError.hasCode(error, "invalid_config")).toBe(true);
      expect((error as Error).message).toContain("clock");
    }
  });
});

function caught(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  return null;
}
