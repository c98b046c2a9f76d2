// Extracts an archive whose source stalls halfway, so the parent test can kill this process mid-extract.
// Runs the built package (the test task builds first).
import { readFile } from "node:fs/promises";
import { extractArchive } from "../../dist/index.js";

const [archivePath, destination] = process.argv.slice(2);
const bytes = await readFile(archivePath);

async function* stallingSource() {
  yield bytes.subarray(0, Math.floor(bytes.length / 2));
  // Give the extraction time to write what it got into staging, then stall until killed.
  await new Promise((resolve) => setTimeout(resolve, 500));
  process.stdout.write("stalled\n");
  await new Promise(() => {});
}

await extractArchive(stallingSource(), destination);
