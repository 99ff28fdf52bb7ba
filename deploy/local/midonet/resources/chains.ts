// Chains (ref §1.4 Chain): no PUT; delete takes the chain's rules, the jump rules targeting it, and clears
// filter references (declared in kinds.ts).
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { defineKind, type RenderCtx } from '../crud';
import { itemUri } from '../kinds';
import type { ChainRec } from '../state';
import { uuid } from '../validation';

const schema = z.object({
  id: uuid.nullish(),
  tenantId: z.string().nullish(),
  name: z.string().max(255).nullish(),
});
type Body = z.infer<typeof schema>;

function render(c: ChainRec, { base }: RenderCtx): Record<string, unknown> {
  const uri = itemUri('Chain', c.id, base);
  return { id: c.id, tenantId: c.tenantId, name: c.name, uri, rules: `${uri}/rules` };
}

export const chains = defineKind<ChainRec, Body>({
  kind: 'Chain',
  schema,
  keyFor: (b) => b.id ?? randomUUID(),
  create: ({ key, body }) => ({ id: key, tenantId: body.tenantId ?? null, name: body.name ?? null, ruleIds: [] }),
  render,
});
