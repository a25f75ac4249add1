// Commit messages are read by `lerna version --conventional-commits` to bump versions and write
// changelogs (docs/releasing.md), so every commit since the last release tag must parse as one.
// Bodies may hold tables and long URLs: only the subject line is bounded. A subject may start with
// a file's name (`RESULTS.md`, `README`), so its case is not checked.
export default {
  extends: ['@commitlint/config-conventional'],
  rules: {
    'body-max-line-length': [0],
    'footer-max-line-length': [0],
    'subject-case': [0],
  },
};
