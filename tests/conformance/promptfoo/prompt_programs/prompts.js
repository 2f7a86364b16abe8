// Prompts made by JavaScript functions (prompt_programs.yaml): ({vars, provider}).
module.exports = async ({ vars }) => `REPLY:js ${vars.topic}:END`;
