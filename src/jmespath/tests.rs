//! JMESPath dialect tests: the fork's error rules and every function (validate.md §12).
