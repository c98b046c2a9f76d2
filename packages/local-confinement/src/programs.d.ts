/** Programs run in a container that are shell, shipped as text (the build's loader inlines a `.sh` file). */
declare module "*.sh" {
  const text: string;
  export default text;
}

/** A program run inside a container, as the text the build bundled it into (scripts/program-text.mjs). */
declare module "*?program" {
  const text: string;
  export default text;
}
