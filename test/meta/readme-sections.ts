/** A heading of a Markdown document and the text under it, its subsections included. */
export interface ReadmeSection {
  readonly heading: string;
  readonly level: number;
  readonly body: string;
}

/** Splits Markdown into sections by ATX headings, ignoring `#` lines inside fenced code blocks. */
export function readmeSections(markdown: string): ReadmeSection[] {
  const lines = markdown.split(/\r?\n/);
  const headings: { heading: string; level: number; line: number }[] = [];
  let fence: string | null = null;
  lines.forEach((line, index) => {
    const fenceMatch = /^\s*(```|~~~)/.exec(line);
    if (fenceMatch)
      fence = fence === null ? (fenceMatch[1] ?? null) : fence === fenceMatch[1] ? null : fence;
    const heading = fence === null ? /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line) : null;
    if (heading)
      headings.push({ heading: heading[2] ?? "", level: (heading[1] ?? "").length, line: index });
  });
  return headings.map((current, index) => {
    const next = headings.slice(index + 1).find((candidate) => candidate.level <= current.level);
    return {
      heading: current.heading,
      level: current.level,
      body: lines.slice(current.line + 1, next?.line ?? lines.length).join("\n"),
    };
  });
}

/** Fenced code blocks with their info string (`ts`, `sh`, …). */
export function codeBlocks(
  markdown: string,
): { readonly language: string; readonly code: string }[] {
  return [...markdown.matchAll(/^\s*(```|~~~)([\w-]*)[^\n]*\n([\s\S]*?)^\s*\1\s*$/gm)].map(
    (match) => ({ language: match[2] ?? "", code: match[3] ?? "" }),
  );
}

/** True when the text holds a Markdown table: a `|` row followed by a `|---|` separator row. */
export const hasTable = (text: string): boolean =>
  /^\s*\|.*\|\s*\r?\n\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/m.test(text);
