// Rules (ref §1.4 Rule): immutable (no PUT), ordered per chain with 1-based positions and head insertion by
// default, typed bodies (jump, NAT, reverse NAT, plain), and the fragmentPolicy defaults GET reports.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { defineKind, load, type RenderCtx } from '../crud';
import { badRequest, invalid } from '../errors';
import { itemUri } from '../kinds';
import { requireRef } from '../refs';
import type { ChainRec, RuleRec, State } from '../state';
import { ipv4, mac, prefixLength, uuid } from '../validation';

const flag = z.boolean().nullish();
const tpRange = z
  .object({ start: z.number().int().min(1).max(65535), end: z.number().int().min(1).max(65535) })
  .nullish();
const FRAGMENT_POLICIES = ['any', 'header', 'nonheader', 'unfragmented'] as const;

/** Condition fields (ref §1.4 Rule, `MN:models/Condition`), all optional, on every rule type. */
const condition = {
  nwDstAddress: ipv4.nullish(),
  nwDstLength: prefixLength.nullish(),
  nwSrcAddress: ipv4.nullish(),
  nwSrcLength: prefixLength.nullish(),
  nwProto: z.number().int().min(0).max(255).nullish(),
  nwTos: z.number().int().min(0).max(255).nullish(),
  dlType: z.number().int().min(0x0600).max(0xffff).nullish(),
  dlSrc: mac.nullish(),
  dlSrcMask: mac.nullish(),
  dlDst: mac.nullish(),
  dlDstMask: mac.nullish(),
  tpSrc: tpRange,
  tpDst: tpRange,
  invNwDst: flag,
  invNwSrc: flag,
  invNwProto: flag,
  invNwTos: flag,
  invDlType: flag,
  invDlSrc: flag,
  invDlDst: flag,
  invTpSrc: flag,
  invTpDst: flag,
  condInvert: flag,
  matchForwardFlow: flag,
  matchReturnFlow: flag,
  inPorts: z.array(uuid).nullish(),
  invInPorts: flag,
  outPorts: z.array(uuid).nullish(),
  invOutPorts: flag,
  portGroup: uuid.nullish(),
  invPortGroup: flag,
  inPortGroup: uuid.nullish(),
  invInPortGroup: flag,
  outPortGroup: uuid.nullish(),
  invOutPortGroup: flag,
  ipAddrGroupSrc: uuid.nullish(),
  invIpAddrGroupSrc: flag,
  ipAddrGroupDst: uuid.nullish(),
  invIpAddrGroupDst: flag,
  traversedDevice: uuid.nullish(),
  invTraversedDevice: flag,
  vlan: z.number().int().nullish(),
  noVlan: flag,
  fragmentPolicy: z.enum(FRAGMENT_POLICIES).nullish(),
  matchNwDstRewritten: flag,
  icmpDataSrcIpAddress: ipv4.nullish(),
  icmpDataSrcIpLength: prefixLength.nullish(),
  icmpDataDstIpAddress: ipv4.nullish(),
  icmpDataDstIpLength: prefixLength.nullish(),
  invIcmpDataSrcIp: flag,
  invIcmpDataDstIp: flag,
  id: uuid.nullish(),
  position: z.number().int().nullish(),
  meterName: z.string().nullish(),
};

/** What GET shows for a condition field nobody set: false for flags, null otherwise. */
const CONDITION_DEFAULTS: Record<string, unknown> = Object.fromEntries(
  Object.entries(condition)
    .filter(([name]) => !['id', 'position'].includes(name))
    .map(([name, s]) => [name, s === flag ? false : null]),
);

const flowAction = z.enum(['accept', 'continue', 'return']);
const natTarget = z.object({
  addressFrom: ipv4,
  addressTo: ipv4,
  portFrom: z.number().int().min(0).max(65535),
  portTo: z.number().int().min(0).max(65535),
});
const plain = <T extends string>(type: T) => z.object({ ...condition, type: z.literal(type) });

const schema = z.discriminatedUnion('type', [
  z.object({ ...condition, type: z.literal('jump'), jumpChainId: uuid, jumpChainName: z.string().nullish() }),
  z.object({ ...condition, type: z.literal('dnat'), flowAction, natTargets: z.array(natTarget).min(1) }),
  z.object({ ...condition, type: z.literal('snat'), flowAction, natTargets: z.array(natTarget).min(1) }),
  z.object({ ...condition, type: z.literal('rev_dnat'), flowAction }),
  z.object({ ...condition, type: z.literal('rev_snat'), flowAction }),
  plain('accept'),
  plain('drop'),
  plain('reject'),
  plain('return'),
  plain('l2_transform'),
  plain('trace'),
]);
type Body = z.infer<typeof schema>;

/** fragmentPolicy as the server fills it in (ref §1.4 Rule, fragmentPolicy defaults). */
function fragmentPolicy(b: Body): (typeof FRAGMENT_POLICIES)[number] {
  const l4 = b.tpSrc != null || b.tpDst != null;
  if (b.fragmentPolicy != null) {
    if (l4 && (b.fragmentPolicy === 'any' || b.fragmentPolicy === 'nonheader')) {
      throw invalid([
        {
          property: 'fragmentPolicy',
          message: 'fragmentPolicy must be header or unfragmented when matching on L4 fields',
        },
      ]);
    }
    return b.fragmentPolicy;
  }
  if (b.type === 'dnat' || b.type === 'snat') {
    const [only, ...more] = b.natTargets;
    const floatingIp =
      only && more.length === 0 && only.addressFrom === only.addressTo && only.portFrom === 0 && only.portTo === 0;
    return floatingIp && !l4 ? 'any' : 'unfragmented';
  }
  return l4 ? 'header' : 'any';
}

function render(r: RuleRec, { state, base }: RenderCtx): Record<string, unknown> {
  const chain = state.chains[r.chainId];
  return {
    ...CONDITION_DEFAULTS,
    ...r.fields,
    id: r.id,
    chainId: r.chainId,
    type: r.type,
    position: chain ? chain.ruleIds.indexOf(r.id) + 1 : null,
    ...(r.type === 'jump' ? { jumpChainId: r.jumpChainId, jumpChain: itemUri('Chain', r.jumpChainId!, base) } : {}),
    uri: itemUri('Rule', r.id, base),
    chain: itemUri('Chain', r.chainId, base),
  };
}

export const rules = defineKind<RuleRec, Body>({
  kind: 'Rule',
  schema,
  keyFor: (b) => b.id ?? randomUUID(),
  create: ({ state, key, body, parentId }) => {
    const chain = load<ChainRec>(state, 'Chain', parentId!);
    const position = body.position ?? 1;
    if (position <= 0 || position > chain.ruleIds.length + 1)
      throw badRequest('Position exceeds number of rules in chain');
    const jumpChainId = body.type === 'jump' ? body.jumpChainId : null;
    requireRef(state, 'Chain', jumpChainId);
    // id, position and the jump target live outside `fields`; position is recomputed on every GET.
    const outside = ['id', 'type', 'position', 'jumpChainId'];
    const kept = Object.fromEntries(Object.entries(body).filter(([k, v]) => v != null && !outside.includes(k)));
    return {
      id: key,
      chainId: chain.id,
      type: body.type,
      jumpChainId,
      fields: { ...kept, fragmentPolicy: fragmentPolicy(body) },
    };
  },
  afterCreate: ({ state, record, body }) => {
    state.chains[record.chainId]!.ruleIds.splice((body.position ?? 1) - 1, 0, record.id);
  },
  list: (state: State, parentId) => load<ChainRec>(state, 'Chain', parentId!).ruleIds.map((id) => state.rules[id]!),
  render,
});
