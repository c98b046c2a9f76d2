/**
 * Source of the thread that hashes a pack's bytes (run with `eval: true`). Inline rather than a file next
 * to the module, so the package works unchanged from `dist`, from source under vitest and inside any
 * bundle that inlines it. Built-ins come through `import()`, which works whether the host's flags make
 * eval code CommonJS or an ES module; messages wait on the port until the listener is attached.
 *
 * Protocol: `{buffer, length}` hashes the first `length` bytes of the transferred `buffer` and sends the
 * buffer back (transferred, for reuse); `{end: true}` answers `{sha256}` and closes the port, which ends
 * the thread.
 */
export const SHA256_WORKER_SOURCE = `
Promise.all([import("node:worker_threads"), import("node:crypto")]).then(([{ parentPort }, { createHash }]) => {
  const hash = createHash("sha256");
  parentPort.on("message", (message) => {
    if (message.end === true) {
      parentPort.postMessage({ sha256: hash.digest("hex") });
      parentPort.close();
      return;
    }
    hash.update(new Uint8Array(message.buffer, 0, message.length));
    parentPort.postMessage({ buffer: message.buffer }, [message.buffer]);
  });
});
`;
