import type { ManagedRuntimeProfile } from "@open-managed-agents/runtime-resource-contract";

/** A tool call of a scripted agent turn (the local control plane has no model). */
export interface ScriptedToolCall {
  readonly name: "bash" | "read" | "write";
  readonly input: Record<string, string>;
}

/** Turn 1: the agent writes notes, `dataMiB` of random data and two outputs in /workspace. */
export function firstTurn(dataMiB: number): ScriptedToolCall[] {
  return [
    {
      name: "write",
      input: {
        file_path: "/workspace/notes/plan.md",
        content: "# Plan\n\n1. write data\n2. check it in the next turn\n",
      },
    },
    {
      name: "bash",
      input: {
        command: [
          "set -e",
          "echo 'hello from turn 1' > notes/hello.txt",
          `head -c ${dataMiB * 1024 * 1024} /dev/urandom > data.bin`,
          "sha256sum data.bin notes/hello.txt > checksums.sha256",
          "printf '# Turn 1\\n\\nWrote notes/ and %s bytes of data.\\n' \"$(wc -c < data.bin)\" > /mnt/session/outputs/report.md",
          "cp checksums.sha256 /mnt/session/outputs/checksums.sha256",
          "pwd && ls -la",
        ].join("\n"),
      },
    },
  ];
}

/** Turn 2: the agent reads turn 1's files back and proves the workspace came back byte for byte. */
export function secondTurn(): ScriptedToolCall[] {
  return [
    { name: "read", input: { file_path: "/workspace/notes/plan.md" } },
    {
      name: "bash",
      input: {
        command: [
          "set -e",
          "sha256sum -c checksums.sha256",
          "printf 'turn 2 found: %s\\n' \"$(cat notes/hello.txt)\" | tee /mnt/session/outputs/verified.txt",
        ].join("\n"),
      },
    },
  ];
}

/** The `ama_worker` profile: the sandbox runs the SDK's AMA worker (`oma-ama-worker`) for each item. */
export function amaWorkerProfile(binDirectory: string): ManagedRuntimeProfile {
  return {
    workspace: { requirement: "durable" },
    outputs: { requirement: "durable" },
    runtimeCheckpoint: "disabled",
    driver: {
      type: "ama_worker",
      process: {
        command: "oma-ama-worker",
        cwd: "/workspace",
        // The turn is over once the session has idled this long (the SDK's default is 60 s).
        env: { PATH: `${binDirectory}:/usr/local/bin:/usr/bin:/bin`, OMA_AMA_MAX_IDLE_MS: "1500" },
      },
    },
  };
}
