import { MODEL_PROVIDER_SECRET_ENV_KEYS } from "@open-managed-agents/sandbox";

/** Nonce of a workspace persistence check, passed to both runs through the process environment. */
export const NONCE_ENV = "OPENMA_CONFORMANCE_NONCE";
/** Session id the supervisor expects to find in its `start` command. */
export const SESSION_ENV = "OPENMA_CONFORMANCE_SESSION";
/** Prefix of every host-side canary value; the guest fails when its environment contains it. */
export const CANARY_PREFIX = "openma-conformance-canary";

/** Output files {@link SCRIPTS.writeOutputs} creates, with their exact content. */
export const EXPECTED_OUTPUTS: readonly {
  readonly logicalPath: string;
  readonly content: Uint8Array;
}[] = [
  { logicalPath: "alpha.txt", content: new TextEncoder().encode("alpha") },
  { logicalPath: "nested/beta.txt", content: new TextEncoder().encode("beta\n") },
];

/** The binary file {@link SCRIPTS.writeBinaryOutput} creates: bytes that are not valid UTF-8, a NUL and CR. */
export const EXPECTED_BINARY_OUTPUT = {
  logicalPath: "binary.bin",
  content: Uint8Array.from([0xff, 0xfe, 0x00, 0x01, 0x80, 0x0a, 0x0d, 0xc3]),
};

const providerKeyChecks = MODEL_PROVIDER_SECRET_ENV_KEYS.map(
  (key) => `test -z "\${${key}+set}" || fail 51 "${key} reached the guest"`,
).join("\n");

/**
 * The POSIX `sh` scripts the suite runs as harness processes. Each exits 0 when the sandbox behaved and
 * with a distinct non-zero code, after a line on stderr, when it did not. Sandbox paths are literal.
 */
export const SCRIPTS = {
  noop: "exit 0",
  writeWorkspace: [
    "mkdir -p /workspace/.openma-conformance",
    `printf '%s' "$${NONCE_ENV}" > /workspace/.openma-conformance/persisted.txt`,
  ].join(" && "),
  checkWorkspace: [
    `fail() { printf '%s\\n' "$2" >&2; exit "$1"; }`,
    `test -f /workspace/.openma-conformance/persisted.txt || fail 41 "the persisted file is missing"`,
    `test "$(cat /workspace/.openma-conformance/persisted.txt)" = "$${NONCE_ENV}" || fail 42 "the persisted file changed"`,
  ].join("\n"),
  workspaceFiles: [
    `fail() { printf '%s\\n' "$2" >&2; exit "$1"; }`,
    `test "$(pwd -P)" = "$(cd /workspace && pwd -P)" || fail 43 "the harness did not start in /workspace"`,
    `printf relative > .openma-conformance-relative || fail 44 "cannot write in the working directory"`,
    `test "$(cat /workspace/.openma-conformance-relative)" = relative || fail 45 "a relative write did not land in /workspace"`,
    `mkdir -p /workspace/.openma-conformance/deep/dir && printf absolute > /workspace/.openma-conformance/deep/dir/file || fail 46 "cannot write under /workspace"`,
    `test "$(cat .openma-conformance/deep/dir/file)" = absolute || fail 47 "an absolute /workspace write is not visible"`,
  ].join("\n"),
  writeOutputs: [
    "mkdir -p /mnt/session/outputs/nested",
    "printf alpha > /mnt/session/outputs/alpha.txt",
    "printf 'beta\\n' > /mnt/session/outputs/nested/beta.txt",
  ].join(" && "),
  writeBinaryOutput: `mkdir -p /mnt/session/outputs && printf '\\377\\376\\000\\001\\200\\n\\r\\303' > /mnt/session/outputs/binary.bin`,
  guestEnvironment: [
    `fail() { printf '%s\\n' "$2" >&2; exit "$1"; }`,
    providerKeyChecks,
    `test -n "$HOSTED_INFERENCE_URL" || fail 52 "HOSTED_INFERENCE_URL is missing"`,
    `test -n "$HOSTED_INFERENCE_TOKEN" || fail 53 "HOSTED_INFERENCE_TOKEN is missing"`,
    `if env | grep -q '${CANARY_PREFIX}'; then fail 54 "a host-side secret reached the guest"; fi`,
  ].join("\n"),
  memoryStores: [
    `fail() { printf '%s\\n' "$2" >&2; exit "$1"; }`,
    `test "$(cat /mnt/memory/conformance-notes/seed.md)" = seed || fail 71 "the writable store's document is missing"`,
    `test "$(cat /mnt/memory/conformance-handbook/rules.md)" = rules || fail 72 "the read-only store's document is missing"`,
    `printf edited > /mnt/memory/conformance-notes/seed.md && mkdir -p /mnt/memory/conformance-notes/deep && printf fresh > /mnt/memory/conformance-notes/deep/new.md || fail 73 "cannot write the writable store"`,
    // A read-only store may refuse the write (a mount) or accept it locally (a copy); it must never reach the store.
    `printf changed > /mnt/memory/conformance-handbook/rules.md 2>/dev/null || true`,
  ].join("\n"),
  supervisor: [
    `fail() { printf '%s\\n' "$2" >&2; exit "$1"; }`,
    `printf '%s\\n' '{"type":"ready","protocol":"openma-harness-supervisor-v1"}'`,
    `IFS= read -r command || fail 61 "stdin closed before the start command"`,
    `case "$command" in *'"type":"start"'*) ;; *) fail 62 "the first command was not start" ;; esac`,
    `case "$command" in *"$${SESSION_ENV}"*) ;; *) fail 63 "the start command names another session" ;; esac`,
    `printf '%s\\n' '{"type":"completed","exitCode":0}'`,
  ].join("\n"),
} as const;

/** Name of a script in {@link SCRIPTS}. */
export type ConformanceScript = keyof typeof SCRIPTS;
