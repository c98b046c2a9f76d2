import { workerdRunConfig } from "./vitest.workerd.js";

/** The workerd tests (see vitest.workerd.ts for what runs for real and what stands in). */
export default workerdRunConfig({ include: ["test/workerd/**/*.test.ts"] });
