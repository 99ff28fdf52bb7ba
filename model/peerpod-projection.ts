import { z } from 'zod';

/** What the watcher sends: a Pod of the peer-pod runtime class, or a PeerPod. */
export const peerPodProjection = z.discriminatedUnion('source', [
  z.object({ source: z.literal('Pod'), runtimeClassName: z.string() }),
  z.object({
    source: z.literal('PeerPod'),
    cloudProvider: z.string().optional(),
    instanceID: z.string().optional(),
    /** The cloud Steward recorded the VM in (its own PeerPods); absent on cloud-api-adaptor's. */
    cloud: z.string().optional(),
    ownerUid: z.string().optional(),
    ownerName: z.string().optional(),
  }),
]);
export type PeerPodProjection = z.infer<typeof peerPodProjection>;
