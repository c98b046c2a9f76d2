/** Prefix of the one result line `load-child` prints. */
export const LOAD_RESULT_PREFIX = "OMA_LOAD_RESULT ";
