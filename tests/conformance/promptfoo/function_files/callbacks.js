module.exports = {
  addNumbers: async (args) => {
    const { a, b } = JSON.parse(args);
    return String(a + b);
  },
  describe: (args) => ({ called: JSON.parse(args) }),
};
