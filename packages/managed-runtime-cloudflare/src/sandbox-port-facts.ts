/**
 * What the Cloudflare runtime's tool-sandbox surface offers, in the vocabulary of the conformance
 * catalog's sandbox-port facts. The driver's catalog row is derived from these and the live ports.
 */
export const CLOUDFLARE_SANDBOX_PORT_FACTS = {
  available: [
    /** spawnDuplexProcess over SDK background processes. */
    "duplex_process",
    /** stdin chunks reach the running process as they are written (file-fed FIFO, no PTY). */
    "streaming_process_stdin",
    "interactive_stdin_without_pty",
    /** readFileBytes / writeFileBytes through the SDK's base64 file API. */
    "file_bytes_io",
    /** createWorkspaceBackup / restoreWorkspaceBackup over the SDK's backups. */
    "workspace_backup",
    /** renewLease renews the container's sleepAfter timer. */
    "provider_lease",
    /** The container class boots the image wrangler deployed for it. */
    "container_image",
  ],
  unavailable: ["runtime_scoped_resume", "process_memory_checkpoint", "sandbox_fork"],
} as const;
