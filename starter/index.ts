/**
 * Starter: the watcher that turns Kubernetes watch events into signal-with-start (one leader), and the `steward`
 * command line (`cli.ts`) with the operator commands.
 */
export {};
