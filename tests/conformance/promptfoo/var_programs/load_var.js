// Variables made by a JavaScript program (var_programs.yaml): the module's function.
module.exports = (varName, prompt, otherVars) => ({ output: `js ${varName} ${otherVars.role}` });
