/**
 * The file helper's protocol, shared by the program (`src/programs/file-helper.ts`, which runs inside each
 * container) and its client (`file-helper.ts`, in the server).
 *
 * Frames on stdin and stdout: u32 length of the rest, u32 request id, u32 header length, a JSON header,
 * then optional raw data. A request header is `{op, ...}`; an answer is `{ok: true, ...}` (with data for
 * `read`) or `{ok: false, code, message}` with the errno code. Requests run concurrently; files stay open
 * between `open*`, `read`/`write` and `close` as numbered handles. The helper exits when stdin ends.
 */

/** Largest frame either side sends or accepts: a header and at most one data chunk. */
export const MAX_FRAME_BYTES = 8 * 1024 * 1024;

/** Largest data chunk of one `read` or `write` frame. */
export const MAX_CHUNK_BYTES = 1024 * 1024;

/** Entries one `list` answer holds at most. */
export const MAX_LIST_ENTRIES = 10_000;
