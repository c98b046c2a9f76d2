// Runs s3rver 3.7.1 on a free loopback port and prints `{"port": N}` on stdout once it listens.
// Argument: the data directory. Every bucket but `plain` differs from s3rver in two ways, both to behave as
// S3 and R2 do; bucket `plain` is left as s3rver ships.
// - `If-None-Match: *` writes answer 412 when the key exists (checked and written under a per-key lock):
//   s3rver ignores that header on PUT and on CompleteMultipartUpload.
// - A PUT answers once the object's bytes are in its file. s3rver answers once they have passed its hashing
//   step, while its file stream may still hold them, and a GET takes the object's length from the file's
//   size: a GET right after a PUT could answer an empty or short body (seen once in CI under load).
// OMA_S3RVER_SLOW_OBJECT_WRITES_MS delays the first write of every file stream in this process by that many
// ms, so tests can show the second difference on demand.
import { createHash } from "node:crypto";
import { WriteStream, createWriteStream } from "node:fs";
import { mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import S3rver from "s3rver";
import S3Error from "s3rver/lib/models/error.js";

const directory = process.argv[2];
if (!directory) {
  process.stderr.write("usage: s3rver-process.mjs <directory>\n");
  process.exit(2);
}

const server = new S3rver({
  address: "127.0.0.1",
  port: 0,
  silent: true,
  directory,
  configureBuckets: [{ name: "plain" }],
});

const slowWritesMs = Number(process.env.OMA_S3RVER_SLOW_OBJECT_WRITES_MS ?? 0);
if (slowWritesMs > 0) {
  const delayed = new WeakSet();
  for (const method of ["_write", "_writev"]) {
    const write = WriteStream.prototype[method];
    WriteStream.prototype[method] = function slowFirstWrite(...args) {
      if (delayed.has(this)) return write.apply(this, args);
      delayed.add(this);
      setTimeout(() => write.apply(this, args), slowWritesMs);
    };
  }
}

const stockPutObject = server.store.putObject;
server.store.putObject = async function putObjectWhenWritten(object) {
  if (object.bucket === "plain") return stockPutObject.call(this, object);
  const objectPath = this.getResourcePath(object.bucket, object.key, "object");
  await mkdir(dirname(objectPath), { recursive: true });
  const md5 = createHash("md5");
  let size = 0;
  const hashing = new Transform({
    transform(chunk, _encoding, callback) {
      md5.update(chunk);
      size += chunk.length;
      callback(null, chunk);
    },
  });
  const content = Buffer.isBuffer(object.content)
    ? Readable.from([object.content])
    : object.content;
  // Resolves once the file stream has written every byte and closed the file.
  await pipeline(content, hashing, createWriteStream(objectPath));
  const digest = md5.digest("hex");
  await this.putMetadata(object.bucket, object.key, object.metadata, digest);
  return { size, md5: digest };
};

const keyLocks = new Map();

async function withKeyLock(lockKey, run) {
  const previous = keyLocks.get(lockKey) ?? Promise.resolve();
  let release;
  const current = new Promise((resolve) => (release = resolve));
  const chained = previous.then(() => current);
  keyLocks.set(lockKey, chained);
  await previous;
  try {
    return await run();
  } finally {
    release();
    if (keyLocks.get(lockKey) === chained) keyLocks.delete(lockKey);
  }
}

function objectWriteTarget(ctx) {
  const [, bucket, ...keyParts] = ctx.path.split("/");
  if (bucket === undefined || bucket === "plain" || keyParts.length === 0) return null;
  const isPut =
    ctx.method === "PUT" &&
    ctx.query.partNumber === undefined &&
    ctx.get("x-amz-copy-source") === "";
  const isComplete = ctx.method === "POST" && ctx.query.uploadId !== undefined;
  if (!isPut && !isComplete) return null;
  return { bucket, key: keyParts.map(decodeURIComponent).join("/") };
}

server.middleware.unshift(async (ctx, next) => {
  const target = objectWriteTarget(ctx);
  if (!target) return next();
  await withKeyLock(`${target.bucket}/${target.key}`, async () => {
    if (
      ctx.get("if-none-match") === "*" &&
      (await ctx.app.store.existsObject(target.bucket, target.key))
    ) {
      const error = new S3Error(
        "PreconditionFailed",
        "At least one of the pre-conditions you specified did not hold",
        { Condition: "If-None-Match" },
      );
      ctx.status = error.status;
      ctx.type = "application/xml";
      ctx.body = error.toXML();
      return;
    }
    await next();
  });
});

const address = await server.run();
process.stdout.write(`${JSON.stringify({ port: address.port })}\n`);

const stop = async () => {
  await server.close();
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
process.stdin.on("end", stop);
process.stdin.resume();
