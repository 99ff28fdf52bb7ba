/**
 * Workflows: deterministic code only. The XState machines (pure data, `machines/`), the small interpreter that runs a
 * machine inside a Temporal workflow (`interpreter.ts`), and one workflow per lifecycle kind: `object-lifecycle.ts`
 * (Node, Pod, Service, Endpoints), `translation-lifecycle.ts` (the pusher of one Translation), `peerpod-lifecycle.ts`,
 * `global-setup.ts`, `sweep.ts`. What they share with the other rooms (names, messages, vocabulary, the translation)
 * is in model/. This module is the worker's only `workflowsPath`; everything here must replay identically.
 */
import '../model/jitless-zod';
export { translationLifecycle } from './translation-lifecycle';
export { endpointsLifecycle, nodeLifecycle, podLifecycle, serviceLifecycle } from './object-lifecycle';
export { globalMidonet } from './global-setup';
export { peerPodLifecycle } from './peerpod-lifecycle';
export { sweep } from './sweep';
