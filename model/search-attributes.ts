import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/**
 * The search attributes every lifecycle workflow keeps current, so operators can find an object's workflow in the
 * Temporal UI (`K8sKind="Pod" AND LifecycleState="stuck"`). The embedded stack registers exactly these.
 */
export const K8sKind = defineSearchAttributeKey('K8sKind', SearchAttributeType.KEYWORD);
export const K8sNamespace = defineSearchAttributeKey('K8sNamespace', SearchAttributeType.KEYWORD);
export const K8sName = defineSearchAttributeKey('K8sName', SearchAttributeType.KEYWORD);
export const K8sUID = defineSearchAttributeKey('K8sUID', SearchAttributeType.KEYWORD);
export const LifecycleState = defineSearchAttributeKey('LifecycleState', SearchAttributeType.KEYWORD);

export const searchAttributeKeys = [K8sKind, K8sNamespace, K8sName, K8sUID, LifecycleState] as const;
