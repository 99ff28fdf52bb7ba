/**
 * The embedded stack used by `npm start`, the tests and the benchmarks: a Temporal dev server with its UI, a
 * Kubernetes control plane (etcd, kube-apiserver, kube-controller-manager with the garbage collector and the EndpointSlice controllers), and libvirt
 * with QEMU, the MidoNet API emulator, and an EC2-compatible test server (moto). Each part is provisioned once (cached outside the repository), started, waited on until it answers,
 * and stopped with the stack; a part the user already runs is reused.
 */
export {
  startStack,
  stackFile,
  temporalEnv,
  STACK_STEWARD_SETTINGS,
  type AnyStackInfo,
  type Stack,
  type StackInfo,
  type StackOptions,
  type TemporalProfile,
} from './stack';
export type { ManagedProcess, SupervisionEvents } from './process';
export { startStewardProcesses, type StewardProcesses, type StewardProcessesOptions } from './steward-processes';
export { createServiceAccountKubeconfig, type ServiceAccountIdentity } from './identities';
export { ProvisionError, MissingPrerequisite } from './progress';
export { EmulatorAdmin } from './midonet';
export { defaultStateDir } from './paths';
