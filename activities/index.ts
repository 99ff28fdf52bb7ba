/**
 * Activities: every side effect, grouped by the system it talks to: `kubernetes/` (Translations, status, Events,
 * back-references, finalizers), `midonet/` (the typed client and the batched push), `cloud/` (VM providers).
 * Each is a factory over its dependencies that returns plain async functions taking one typed input and returning
 * plain JSON; failures carry one CamelCase vocabulary per backend that says what Temporal may retry.
 */
export { createKubernetesActivities, type KubernetesActivities } from './kubernetes';
export {
  createMidonetActivities,
  createMidonetClient,
  createPushActivities,
  type MidonetActivities,
  type PushActivities,
} from './midonet';
