import type { LocalControlPlane } from "@open-managed-agents/local-control-plane";
import { say } from "./format.js";

const MAX_LINES = 12;

/** Prints the session's tool calls and their results, as the control plane recorded them. */
export function printTranscript(
  plane: LocalControlPlane,
  sessionId: string,
  turnOf: (turnId: string) => number,
): void {
  say();
  say(`session transcript of ${sessionId} (tool calls run by the AMA worker in the sandbox)`);
  for (const entry of plane.transcript(sessionId).entries) {
    const input = entry.input as Record<string, unknown>;
    const summary =
      typeof input.command === "string"
        ? firstLine(input.command)
        : String(input.file_path ?? JSON.stringify(input));
    say(`  turn ${turnOf(entry.turn_id)}  ${entry.name.padEnd(5)} ${summary}`);
    const result = entry.result;
    if (!result) {
      say("           (no result)");
      continue;
    }
    const text = result.content.map(blockText).join("");
    const lines = text.replace(/\n+$/, "").split("\n");
    for (const line of lines.slice(0, MAX_LINES))
      say(`           ${result.is_error ? "! " : "| "}${line}`);
    if (lines.length > MAX_LINES) say(`           | … ${lines.length - MAX_LINES} more lines`);
  }
}

function firstLine(command: string): string {
  const lines = command.split("\n").filter((line) => line !== "set -e");
  return lines.length > 1 ? `${lines[0]} … (${lines.length} lines)` : (lines[0] ?? "");
}

function blockText(block: unknown): string {
  const record =
    typeof block === "object" && block !== null ? (block as Record<string, unknown>) : {};
  return typeof record.text === "string" ? record.text : `[${String(record.type ?? "block")}]`;
}
