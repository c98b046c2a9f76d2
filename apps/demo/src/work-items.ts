import type { ManagedRuntimeProfile } from "@open-managed-agents/runtime-resource-contract";

function profile(script: string): ManagedRuntimeProfile {
  return {
    workspace: { requirement: "durable" },
    outputs: { requirement: "durable" },
    runtimeCheckpoint: "disabled",
    driver: { type: "ama_worker", process: { command: "sh", args: ["-c", script], cwd: "/workspace" } },
  };
}

/** Work item 1 writes a workspace (notes plus `dataMiB` of random data) and two outputs. */
export function firstWorkItem(dataMiB: number): ManagedRuntimeProfile {
  return profile(
    [
      "set -e",
      "mkdir -p notes",
      "echo 'hello from work item 1' > notes/hello.txt",
      "date -u +%Y-%m-%dT%H:%M:%SZ > notes/created-at.txt",
      `head -c ${dataMiB * 1024 * 1024} /dev/urandom > data.bin`,
      "sha256sum data.bin notes/hello.txt > checksums.sha256",
      "printf '# Work item 1\\n\\nWrote notes/ and %s bytes of data.\\n' \"$(wc -c < data.bin)\" > /mnt/session/outputs/report.md",
      "cp checksums.sha256 /mnt/session/outputs/checksums.sha256",
    ].join("\n"),
  );
}

/** Work item 2 proves the workspace came back byte for byte, and records that as an output. */
export function secondWorkItem(): ManagedRuntimeProfile {
  return profile(
    [
      "set -e",
      "sha256sum -c checksums.sha256",
      "printf 'work item 2 found: %s\\n' \"$(cat notes/hello.txt)\" > /mnt/session/outputs/verified.txt",
    ].join("\n"),
  );
}
