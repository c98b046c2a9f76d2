import { shellQuote } from "@open-managed-agents/runtime-resource-contract";

/** Joins words, each single-quoted for `sh -c`, into one command line. Specs are grammar-checked first. */
export function shellCommand(words: readonly string[]): string {
  return words.map(shellQuote).join(" ");
}
