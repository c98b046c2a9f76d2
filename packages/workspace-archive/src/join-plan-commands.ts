import { shellQuote } from "@open-managed-agents/runtime-resource-contract";
import { parentOf } from "./entry-name.js";
import { type JoinPlan, parseJoinPlan } from "./join-plan.js";

/** Options of {@link joinPlanCommands}. */
export interface JoinPlanCommandOptions {
  /** Folder the parts were extracted into; the command starts with `cd` to it. @default "/workspace" */
  readonly cwd?: string;
  /** Check the joined file with `sha256sum -c` (GNU coreutils or BusyBox) before it replaces anything. @default false */
  readonly verify?: boolean;
}

/**
 * A POSIX `sh` command that applies a join plan inside a sandbox after all parts were extracted: it
 * concatenates the chunks (checking their count) into a temporary file, optionally verifies the sha256,
 * sets mode and mtime (`TZ=UTC0 touch -t`), moves it over the target, recreates hardlinks and removes the
 * chunks. It exits non-zero at the first failing step and leaves the target untouched in that case.
 */
export function joinPlanCommands(plan: JoinPlan, options: JoinPlanCommandOptions = {}): string {
  const checked = parseJoinPlan(plan);
  const target = shellQuote(checked.target);
  const temporary = shellQuote(`${checked.target}.oma-join`);
  const steps = [
    `cd ${shellQuote(options.cwd ?? "/workspace")}`,
    `mkdir -p ${shellQuote(`./${parentOf(checked.target.slice(2))}`)}`,
    `set -- ${shellQuote(checked.chunkDirectory)}/*`,
    `[ "$#" -eq ${checked.chunks.length} ]`,
    `rm -f ${temporary}`,
    `cat "$@" > ${temporary}`,
    ...(options.verify
      ? [`printf '%s  %s\\n' ${checked.sha256} ${temporary} | sha256sum -c - > /dev/null`]
      : []),
    `chmod ${checked.mode.toString(8).padStart(4, "0")} ${temporary}`,
    `TZ=UTC0 touch -t ${touchTimestamp(checked.mtime)} ${temporary}`,
    `[ ! -d ${target} ]`,
    `mv -f ${temporary} ${target}`,
    ...checked.links.map((link) => `ln -f ${target} ${shellQuote(link)}`),
    `rm -rf ${shellQuote(checked.chunkDirectory)}`,
    `{ rmdir ${shellQuote(`./${parentOf(checked.chunkDirectory.slice(2))}`)} 2> /dev/null || true; }`,
  ];
  return steps.join(" && ");
}

/** Single-quotes a word for `sh`. */

/** `[[CC]YY]MMDDhhmm.SS` in UTC, the only timestamp form POSIX `touch -t` accepts. */
function touchTimestamp(seconds: number): string {
  const date = new Date(seconds * 1000);
  const two = (value: number) => String(value).padStart(2, "0");
  return `${date.getUTCFullYear()}${two(date.getUTCMonth() + 1)}${two(date.getUTCDate())}${two(date.getUTCHours())}${two(date.getUTCMinutes())}.${two(date.getUTCSeconds())}`;
}
