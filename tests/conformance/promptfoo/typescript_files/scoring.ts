// A TypeScript scoring function of typescript.yaml (a module without a default export:
// promptfoo looks a named scoring function up on the default export when there is one).
interface Result {
  pass: boolean;
  score: number;
  reason: string;
}

export const lowest = (
  namedScores: Record<string, number>,
  context: { componentResults: Result[] },
): Result => {
  const scores = context.componentResults.map((result) => result.score);
  const lowest = Math.min(...scores);
  return { pass: lowest >= 0.5, score: lowest, reason: `lowest ${lowest}` };
};
