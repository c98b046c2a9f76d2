import type { DestroyedSandboxes } from "@open-managed-agents/managed-runtime-sandbox";
import type { CloudflareSandbox } from "../sandbox/cloudflare-sandbox.js";

/**
 * The sandbox of `runtimeId`, wrapped so that nothing but a state read or a destroy reaches it once this
 * driver destroyed it. A call that reaches a `Sandbox` Durable Object after its container was destroyed
 * starts a fresh, empty container (`containerFetch` starts a stopped one): a process kill or status read
 * after a lost lease, a late stdin write, a file read or a backup after terminate would leave a container
 * running that nothing tracks. Those calls fail with `lease_lost` instead and never reach the object;
 * `containerState` (which reads storage and never starts the container) and `destroy` (idempotent, the
 * reconciler's reap) still do.
 *
 * A call already in flight when the destroy goes out (a heartbeat's renewal, a status read) can still reach
 * the object after it and start a container there, so each call that settles once the sandbox is destroyed
 * is followed by one more destroy, sent after every destroy before it has answered.
 */
export function guardDestroyedSandbox(
  destroyed: DestroyedSandboxes,
  runtimeId: string,
  sandbox: CloudflareSandbox,
): CloudflareSandbox {
  // The destroys this wrapper sent, in order; a follow-up joins the end of the line.
  let destroys: Promise<void> = Promise.resolve();
  const destroyAfter = () => {
    destroys = destroys.then(() => sandbox.destroy()).catch(() => undefined);
    return destroys;
  };
  const followUp = () => {
    if (destroyed.has(runtimeId)) void destroyAfter();
  };
  const guarded =
    <A extends unknown[], R>(operation: string, call: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      destroyed.refuse(runtimeId, operation);
      try {
        return await call(...args);
      } finally {
        followUp();
      }
    };
  return {
    exec: guarded("exec", (command, options) => sandbox.exec(command, options)),
    startProcess: guarded("startProcess", (command, options) =>
      sandbox.startProcess(command, options),
    ),
    async *processLogs(processId, signal) {
      destroyed.refuse(runtimeId, "processLogs");
      try {
        yield* sandbox.processLogs(processId, signal);
      } finally {
        followUp();
      }
    },
    processStatus: guarded("processStatus", (processId) => sandbox.processStatus(processId)),
    killProcess: guarded("killProcess", (processId, signal) =>
      sandbox.killProcess(processId, signal),
    ),
    readFile: guarded("readFile", (path) => sandbox.readFile(path)),
    writeFile: guarded("writeFile", (path, content) => sandbox.writeFile(path, content)),
    createBackup: guarded("createBackup", (input) => sandbox.createBackup(input)),
    restoreBackup: guarded("restoreBackup", (handle) => sandbox.restoreBackup(handle)),
    mountBucket: guarded("mountBucket", (input) => sandbox.mountBucket(input)),
    unmountBucket: guarded("unmountBucket", (mountPath) => sandbox.unmountBucket(mountPath)),
    renewActivityTimeout: guarded("renewActivityTimeout", () => sandbox.renewActivityTimeout()),
    setOutboundHandler: guarded("setOutboundHandler", (handler, params) =>
      sandbox.setOutboundHandler(handler, params),
    ),
    containerState: () => sandbox.containerState(),
    async destroy() {
      // Remembered before the request: a call racing the destroy must not start a fresh container either.
      destroyed.remember(runtimeId);
      const request = sandbox.destroy();
      destroys = destroys.then(() => request).catch(() => undefined);
      await request;
    },
  };
}
