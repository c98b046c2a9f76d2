/** Programs run in a sandbox, shipped as text (the build's loader inlines a `.sh` file as a string). */
declare module "*.sh" {
  const text: string;
  export default text;
}
