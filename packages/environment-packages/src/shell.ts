/** Single-quotes a word for `sh -c`. Specs are grammar-checked first; quoting is the second line of defence. */
export function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** Joins quoted words into one command line. */
export function shellCommand(words: readonly string[]): string {
  return words.map(shellQuote).join(" ");
}
