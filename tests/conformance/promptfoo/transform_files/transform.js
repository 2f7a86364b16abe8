// promptfoo's file transform contract: the module is called with (output, context)
module.exports = (output, context) => `${output.toUpperCase()}|${context.vars.tag}`;
module.exports.firstWord = (output) => output.split(" ")[0];
module.exports.broken = () => {
  throw new Error("no transform today");
};
