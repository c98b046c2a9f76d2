import type { Stats } from "node:fs";
import { extname } from "node:path";

const MIME_TYPES: Readonly<Record<string, string>> = {
  ".txt": "text/plain",
  ".log": "text/plain",
  ".md": "text/markdown",
  ".csv": "text/csv",
  ".html": "text/html",
  ".htm": "text/html",
  ".css": "text/css",
  ".js": "text/javascript",
  ".mjs": "text/javascript",
  ".cjs": "text/javascript",
  ".ts": "text/typescript",
  ".tsx": "text/typescript",
  ".jsx": "text/javascript",
  ".py": "text/x-python",
  ".sh": "application/x-sh",
  ".json": "application/json",
  ".xml": "application/xml",
  ".yaml": "text/yaml",
  ".yml": "text/yaml",
  ".toml": "text/plain",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".ico": "image/x-icon",
  ".pdf": "application/pdf",
  ".zip": "application/zip",
  ".gz": "application/gzip",
  ".tgz": "application/gzip",
  ".tar": "application/x-tar",
  ".wasm": "application/wasm",
  ".bin": "application/octet-stream",
};

const TEXT_MIME_TYPES = new Set([
  "application/json",
  "application/xml",
  "application/x-sh",
  "image/svg+xml",
]);

/** How a file's content travels: its MIME type and whether it goes as base64. */
export interface ContentKind {
  readonly mimeType: string;
  readonly isBinary: boolean;
}

/**
 * Classifies a file by extension and a sample of its first bytes: text types travel as UTF-8 unless the
 * sample holds a NUL byte or invalid UTF-8; unknown extensions are text when the sample reads as text.
 */
export function classifyContent(path: string, sample: Uint8Array): ContentKind {
  const known = MIME_TYPES[extname(path).toLowerCase()];
  const textLike = known === undefined || known.startsWith("text/") || TEXT_MIME_TYPES.has(known);
  if (!textLike) return { mimeType: known as string, isBinary: true };
  const readsAsText = looksLikeText(sample);
  if (known === undefined)
    return readsAsText
      ? { mimeType: "text/plain", isBinary: false }
      : { mimeType: "application/octet-stream", isBinary: true };
  return { mimeType: known, isBinary: !readsAsText };
}

function looksLikeText(sample: Uint8Array): boolean {
  if (sample.includes(0)) return false;
  try {
    // `stream: true` tolerates a character cut at the end of the sample.
    new TextDecoder("utf-8", { fatal: true }).decode(sample, { stream: true });
    return true;
  } catch {
    return false;
  }
}

/** `rwxr-xr-x` form of a mode. */
export function modeString(mode: number): string {
  const flags = ["r", "w", "x"];
  let text = "";
  for (let bit = 8; bit >= 0; bit -= 1) text += mode & (1 << bit) ? flags[(8 - bit) % 3] : "-";
  return text;
}

/** Kind of a directory entry as `/api/list-files` names it. */
export function entryType(stats: Stats): "file" | "directory" | "symlink" | "other" {
  if (stats.isSymbolicLink()) return "symlink";
  if (stats.isDirectory()) return "directory";
  if (stats.isFile()) return "file";
  return "other";
}
