// Commit messages are read by `lerna version --conventional-commits` to bump versions and write
// changelogs (docs/releasing.md), so every commit since the last release tag must parse as one.
// Bodies may hold tables and long URLs: only the subject line is bounded.
export default {
  extends: ['@commitlint/config-conventional'],
  rules: {
    'body-max-line-length': [0],
    'footer-max-line-length': [0],
  },
};
