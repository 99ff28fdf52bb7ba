/**
 * Starter: the watcher that turns Kubernetes watch events into signal-with-start, one leader at a time
 * (`controller/`), and the `steward` command line (`cli.ts`): `up`, `worker`, `starter`, `demo` and the operator
 * commands (`commands.ts`).
 */
export { createStarter, type Starter, type StarterOptions } from './controller';
