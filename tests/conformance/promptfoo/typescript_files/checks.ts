// A TypeScript assert of typescript.yaml: the module's default export.
interface AssertContext {
  vars: Record<string, string>;
}

export default (output: string, context: AssertContext): boolean =>
  output.includes(context.vars.word);
