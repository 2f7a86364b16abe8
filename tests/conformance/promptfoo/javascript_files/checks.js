// File asserts of javascript_files.yaml (read by both tools).
module.exports = (output, context) => output.includes(context.vars.expected);
module.exports.scored = (output) => output.length / 20;
module.exports.graded = (output, context) => ({
  pass: output.length >= context.config.minLength,
  score: 0.7,
  reason: `length ${output.length} against ${context.config.minLength}`,
});
module.exports.later = async (output) => output.startsWith('Hello');
module.exports.broken = () => {
  throw new Error('this grader is broken');
};
module.exports.nothing = () => undefined;
