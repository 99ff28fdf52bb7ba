/**
 * Activities: every side effect, grouped by the system it talks to (`kubernetes/`, `midonet/`, `cloud/`).
 * Each is a factory over its dependencies that returns plain async functions taking one typed input.
 */
export {};
