// Scoring functions of scoring_function.yaml: each makes a test's result from its asserts'.
module.exports.lowest = (namedScores, context) => {
  const scores = context.componentResults.map((result) => result.score);
  const lowest = Math.min(...scores);
  return { pass: lowest >= 0.5, score: lowest, reason: `lowest of ${scores.length}: ${lowest}` };
};
module.exports.byMetric = async (namedScores) => {
  const accuracy = namedScores.accuracy ?? 0;
  return { pass: accuracy > 0.6, score: accuracy, reason: JSON.stringify(namedScores) };
};
module.exports.number = () => 0.9;
module.exports.partial = () => ({ score: 1 });
module.exports.throws = () => {
  throw new Error('scoring failed on purpose');
};
