import { randomUUID } from "node:crypto";
import type { RuntimeMemoryStore } from "@open-managed-agents/runtime-resource-contract";
import { check, expectTypedError } from "./assertions.js";
import type { CaseContext } from "./case-context.js";
import type { ConformanceCaseImplementation } from "./case-definition.js";
import { wrapDriver } from "./case-definition.js";
import { createSuiteMemoryAccess } from "./memory-access.js";
import { checkCompleted } from "./run-checks.js";

function suiteStores(): RuntimeMemoryStore[] {
  const suffix = randomUUID().slice(0, 8);
  return [
    { storeName: "conformance-notes", storeId: `conformance-notes-${suffix}`, readOnly: false },
    {
      storeName: "conformance-handbook",
      storeId: `conformance-handbook-${suffix}`,
      readOnly: true,
    },
  ];
}

const noFiles = () => Promise.reject(new Error("the memory-store case downloads no session files"));

/** `file_sync`: the harness sees both stores; its changes reach the writable store only, at write-back. */
async function verifyFileSync(context: CaseContext): Promise<void> {
  const [notes, handbook] = suiteStores() as [RuntimeMemoryStore, RuntimeMemoryStore];
  const memory = createSuiteMemoryAccess({
    [notes.storeId]: { "seed.md": "seed" },
    [handbook.storeId]: { "rules.md": "rules" },
  });
  const run = await context.run(context.profile("memoryStores"), {
    input: {
      memoryStores: [notes, handbook],
      sessionInputAccess: { downloadFile: noFiles, memories: memory.port },
    },
  });
  checkCompleted(run, "the memory-store run");
  const written = memory.documents(notes.storeId);
  check(
    JSON.stringify(written) === JSON.stringify({ "seed.md": "edited", "deep/new.md": "fresh" }),
    `the writable store holds ${JSON.stringify(written)} after write-back`,
  );
  const untouched = memory.documents(handbook.storeId);
  check(
    JSON.stringify(untouched) === JSON.stringify({ "rules.md": "rules" }),
    `the read-only store was written: ${JSON.stringify(untouched)}`,
  );
}

/** `mount`: the runtime mounts every store it is handed, read-only ones as read-only, and the run completes. */
async function verifyMount(context: CaseContext): Promise<void> {
  const stores = suiteStores();
  const mounted: (readonly RuntimeMemoryStore[])[] = [];
  const run = await context.run(context.profile("noop"), {
    input: { memoryStores: stores },
    wrapDriver: (driver) =>
      wrapDriver(driver, {
        resources: (resources) => {
          const port = resources.memoryStores;
          if (!port) return resources;
          return {
            ...resources,
            memoryStores: {
              ...port,
              mount: (input) => (mounted.push(input.stores), port.mount(input)),
            },
          };
        },
      }),
  });
  checkCompleted(run, "the memory-store mount run");
  check(
    JSON.stringify(mounted) === JSON.stringify([stores]),
    `the port mounted ${JSON.stringify(mounted)}, not the run's stores`,
  );
}

/** `persistence.memory-stores`. */
export const memoryStoresCase: ConformanceCaseImplementation = {
  claimed: (subject) => subject.descriptor.memoryStores !== undefined,
  async verify(context) {
    const { resources } = await context.prepare(context.profile("noop"));
    const claimed = context.subject.descriptor.memoryStores;
    check(
      resources.memoryStores?.mode === claimed,
      `the descriptor claims ${claimed} memory stores and the live port is ${resources.memoryStores?.mode ?? "absent"}`,
    );
    if (claimed === "file_sync") await verifyFileSync(context);
    else await verifyMount(context);
  },
  async refuse(context) {
    const run = await context.run(context.profile("noop"), {
      input: { memoryStores: suiteStores() },
    });
    await expectTypedError(
      () =>
        run.result.type === "failed"
          ? Promise.reject(run.result.error)
          : Promise.resolve(run.result),
      ["capability_unsupported"],
      "running a work item that carries memory stores on a driver that claims none",
    );
    check(
      run.observations.leases.length === 0,
      "a sandbox was acquired for memory stores the driver does not claim",
    );
  },
};
