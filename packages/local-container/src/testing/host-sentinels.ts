import { type ChildProcess, spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** Host state a hostile-command suite plants before its probes and checks after each one. */
export interface HostSentinels {
  /** Random tag in every sentinel's name, for names a probe may use too. */
  readonly tag: string;
  /** A host file under `/etc`; a confined container sees its own copy at the same path. */
  readonly etcFile: string;
  /** A host file under `/root`, which a confined container never sees. */
  readonly rootFile: string;
  /** A host directory under `hostOnlyParent` holding `secret`; not visible in a confined container. */
  readonly hostOnlyDir: string;
  /** Content of `<hostOnlyDir>/secret`: output containing it leaked a host file. */
  readonly secret: string;
  /** Pid of a host `sleep` a probe tries to signal. */
  readonly hostPid: number;
  /** What differs from when the sentinels were planted (`/etc/passwd` included); empty when the host is untouched. */
  changes(): string[];
  /** Removes every sentinel and kills the host process. */
  remove(): void;
}

/** Options of {@link plantHostSentinels}. */
export interface PlantHostSentinelsOptions {
  /** Where the host-only directory goes. @default "/home" */
  readonly hostOnlyParent?: string;
}

const ETC_CONTENT = "host etc sentinel\n";
const ROOT_CONTENT = "host root sentinel\n";

/** Plants the {@link HostSentinels}: needs root (it writes under `/etc` and `/root`). */
export function plantHostSentinels(options: PlantHostSentinelsOptions = {}): HostSentinels {
  const tag = randomBytes(6).toString("hex");
  const etcFile = `/etc/oma-sentinel-${tag}`;
  const rootFile = `/root/oma-sentinel-${tag}`;
  const hostOnlyDir = join(options.hostOnlyParent ?? "/home", `oma-host-only-${tag}`);
  const secret = `host-only-secret-${tag}`;
  writeFileSync(etcFile, ETC_CONTENT);
  writeFileSync(rootFile, ROOT_CONTENT);
  mkdirSync(hostOnlyDir, { recursive: true });
  writeFileSync(join(hostOnlyDir, "secret"), secret);
  const passwd = digest("/etc/passwd");
  const sleeper: ChildProcess = spawn("sleep", ["3600"], { stdio: "ignore" });
  const expected: [string, string][] = [
    [etcFile, ETC_CONTENT],
    [rootFile, ROOT_CONTENT],
    [join(hostOnlyDir, "secret"), secret],
  ];
  return {
    tag,
    etcFile,
    rootFile,
    hostOnlyDir,
    secret,
    hostPid: sleeper.pid ?? -1,
    changes() {
      const changed = expected
        .filter(([path, content]) => readOrNull(path) !== content)
        .map(([path]) => `${path} changed or is gone`);
      if (digest("/etc/passwd") !== passwd) changed.push("/etc/passwd changed");
      if (sleeper.exitCode !== null || sleeper.signalCode !== null)
        changed.push(
          `host process ${sleeper.pid} ended (${sleeper.signalCode ?? sleeper.exitCode})`,
        );
      return changed;
    },
    remove() {
      sleeper.kill("SIGKILL");
      for (const path of [etcFile, rootFile, hostOnlyDir])
        rmSync(path, { recursive: true, force: true });
    },
  };
}

function digest(path: string): string {
  return createHash("sha256")
    .update(readOrNull(path) ?? "")
    .digest("hex");
}

function readOrNull(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}
