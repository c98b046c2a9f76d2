import { createMemoryBlobStore } from "../src/index.js";
import { describeBlobStoreSuite } from "./blob-store-suite.js";

describeBlobStoreSuite("memory", {
  createStore: () => createMemoryBlobStore(),
  largeObject: {
    skip: "the memory store holds every byte in memory by design; the 1 MiB stream case covers its streaming path",
  },
});
