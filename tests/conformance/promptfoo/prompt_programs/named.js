// A named prompt function of a module without a default export (prompt_programs.yaml).
module.exports.shout = ({ vars }) => `REPLY:${vars.topic.toUpperCase()}:END`;
