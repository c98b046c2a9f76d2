import { packageTestConfig } from "../../vitest.base.js";

export default packageTestConfig(30_000);
