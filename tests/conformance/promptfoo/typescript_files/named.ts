// Named TypeScript functions of typescript.yaml (a module without a default export).
interface Result {
  pass: boolean;
  score: number;
  reason: string;
}

export const scored = async (output: string): Promise<Result> => ({
  pass: output.length > 5,
  score: 0.75,
  reason: `length ${output.length}`,
});

export const shout = (output: string): string => output.toUpperCase();
