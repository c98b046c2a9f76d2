// Runs s3rver 3.7.1 on a free loopback port and prints `{"port": N}` on stdout once it listens.
// Argument: the data directory. Every bucket but `plain` answers `If-None-Match: *` writes the way S3 and R2
// do (412 when the key exists, checked and written under a per-key lock), because s3rver itself
// ignores that header on PUT and on CompleteMultipartUpload. Bucket `plain` is left as s3rver ships.
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
  const isPut = ctx.method === "PUT" && ctx.query.partNumber === undefined && ctx.get("x-amz-copy-source") === "";
  const isComplete = ctx.method === "POST" && ctx.query.uploadId !== undefined;
  if (!isPut && !isComplete) return null;
  return { bucket, key: keyParts.map(decodeURIComponent).join("/") };
}

server.middleware.unshift(async (ctx, next) => {
  const target = objectWriteTarget(ctx);
  if (!target) return next();
  await withKeyLock(`${target.bucket}/${target.key}`, async () => {
    if (ctx.get("if-none-match") === "*" && (await ctx.app.store.existsObject(target.bucket, target.key))) {
      const error = new S3Error("PreconditionFailed", "At least one of the pre-conditions you specified did not hold", { Condition: "If-None-Match" });
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
